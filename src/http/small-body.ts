/**
 * A small request body read whole, for `body: 'raw'` routes that must accept an empty body
 * (logout) or a non-JSON one (an OAuth form post). Past `max` it reads on, without keeping, up to
 * 64 × `max`, so the client still receives the 413 instead of a reset connection (SPEC §2).
 */
import { ApiError } from '../core/errors.js';
import type { RequestStream } from '../core/sink.js';

export async function readSmallBody(source: RequestStream, max: number): Promise<Buffer> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of source as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max * 64) break;
    if (size <= max) chunks.push(chunk);
  }
  if (size > max) throw new ApiError('PAYLOAD_TOO_LARGE');
  return Buffer.concat(chunks);
}
