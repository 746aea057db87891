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
  throw new Error('s3:// backup destinations are not available in this build yet (use file:///…)');
}
