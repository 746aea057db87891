/** The S3 client shared by photo storage and backups (docs/reference/object-storage.md). */
export { parseS3Url, isS3Url, s3Settings, endpointLabel } from './config.js';
export type { S3Location, S3Settings } from './config.js';
export { isUnavailable, describeS3Error } from './errors.js';
export { S3Bucket, openS3 } from './client.js';
export type { S3ObjectInfo, S3Head, PutOptions } from './client.js';
