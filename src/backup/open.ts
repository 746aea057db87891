/** Opening a destination from its URL (docs/reference/backups.md): `file:///abs/path` or `s3://bucket/prefix`. */
import { checkBackupUrl, type Destination } from './destination.js';

export async function openDestination(url: string): Promise<Destination> {
  const problem = checkBackupUrl(url);
  if (problem) throw new Error(problem);
  const u = new URL(url);
  if (u.protocol === 'file:') {
    const { FileDestination } = await import('./file-destination.js');
    return new FileDestination(decodeURIComponent(u.pathname));
  }
  const { openS3 } = await import('../s3/index.js');
  const { S3Destination } = await import('./s3-destination.js');
  return new S3Destination(openS3(url));
}
