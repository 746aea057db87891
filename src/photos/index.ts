/** Photos (SPEC §10): upload limits and sniffing, blob store, thumbnails, serving. */
export { createPhotoService, photosTable, photosTableFor, DEFAULT_PHOTO_MAX_BYTES, DEFAULT_PHOTO_MIME_TYPES } from './service.js';
export type { PhotoRepo, PhotoService, PhotoServiceOptions } from './service.js';
export { receiveUpload, MULTIPART_SLACK } from './upload.js';
export type { UploadOptions, ReceivedUpload } from './upload.js';
export { FsBlobStore, PHOTO_ID, assertPhotoId } from './blob-store.js';
export type { BlobStore, BlobStat, ByteRange, OpenedBlob, BlobScan } from './blob-store.js';
export { Thumbnailer, parseThumb, MAX_THUMB_SIDE } from './thumbs.js';
export type { ThumbSize, ThumbnailerOptions } from './thumbs.js';
export { servePhoto, parseRange, noneMatch, cacheControl, thumbnailerFor } from './serve.js';
export type { ServePhotoOptions, RangeResult } from './serve.js';
export { sniffMime, readDimensions, sniffImage, normalizeMime, IMAGE_MIME_TYPES } from './sniff.js';
export type { ImageMime, Dimensions } from './sniff.js';
export { MAX_PIXELS, MAX_SIDE, HEAD_MAX } from './inspect.js';
export { DbBlobStore, prepareBlobTable } from './db-blob-store.js';
export { photoStoreFor } from './db-store-for.js';
export { openPhotoStore } from './open-store.js';
export { S3BlobStore } from './s3-blob-store.js';
export { PhotoRecovery, markPending, clearPending } from './recovery.js';
