/**
 * The photo routes below HTTP routing (docs/reference/photos.md). The caller routes `POST /img`, `GET /img/{id}`
 * and `DELETE /img/{id}` here after the rate limiter; this module applies the documented order
 * fixes: limits (413 / 415) before rules, rules before any write.
 *
 *   upload:  receive (size, type, dimensions) → canUpload (default deny) → commit blob → insert row
 *   get:     row (404) → canView (default allow)
 *   delete:  row (404) → canDelete (default deny) → delete row → delete blob and thumbnails
 */
import type { RequestHead, RequestStream, Sink } from '../core/sink.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../core/errors.js';
import type { PhotoOptions, PhotoRow } from '../define/project.js';
import type { Jwt, Verdict } from '../define/types.js';
import { column, table } from '../define/index.js';
import { FsBlobStore, PHOTO_ID } from './blob-store.js';
import { receiveUpload } from './upload.js';
import { servePhoto } from './serve.js';
import { parseThumb, Thumbnailer } from './thumbs.js';
import { IMAGE_MIME_TYPES } from './sniff.js';
import { clearPending, markPending, PhotoRecovery } from './recovery.js';

export const DEFAULT_PHOTO_MAX_BYTES = 5 * 1024 * 1024;
export const DEFAULT_PHOTO_MIME_TYPES: readonly string[] = IMAGE_MIME_TYPES;

const PHOTO_COLUMNS = {
  mimeType: column.text(),
  size: column.integer(),
  ownerId: column.text().nullable().index(),
  width: column.integer().nullable(),
  height: column.integer().nullable(),
  createdAt: column.createdAt(),
};

/** The `_photos` metadata table (docs/reference/photos.md), declared with the definition API; closed to /db. */
export const photosTable = table('_photos', { prefix: 'ph', columns: PHOTO_COLUMNS });

/**
 * `_photos` with the project's `photos.tableRules`, which open it to reads through /db
 * (docs/reference/photos.md); without them it is `photosTable`, closed. Writes stay denied: rows change only
 * through `/img`.
 */
export function photosTableFor(options: PhotoOptions | undefined): typeof photosTable {
  const rules = options?.tableRules;
  if (!rules) return photosTable;
  return table('_photos', { prefix: 'ph', columns: PHOTO_COLUMNS, rules: { canList: rules.canList, canView: rules.canView, canCount: rules.canCount } });
}

/** Row storage for `_photos`; the server implements it over the serialized writer. */
export interface PhotoRepo {
  insert(row: PhotoRow): Promise<void>;
  get(id: string): Promise<PhotoRow | null>;
  delete(id: string): Promise<void>;
}

export interface PhotoServiceOptions {
  options: PhotoOptions | undefined;
  /** The data folder; blobs live in `<dataDir>/photos/`. */
  dataDir: string;
  /** Where bytes live when not only in this folder (PostgreSQL: DbBlobStore). */
  store?: FsBlobStore;
  repo: PhotoRepo;
  /** A fresh `ph_…` id. */
  newId: () => string;
  /** ISO timestamp for `createdAt`. */
  now: () => string;
  /** Told about cleanup failures that must not change the caller's answer. */
  onError?: (err: unknown, context: string) => void;
  /** Orphan sweep tuning (tests); see recovery.ts. */
  recovery?: { graceMs?: number; pageSize?: number; intervalMs?: number };
}

export interface PhotoService {
  readonly store: FsBlobStore;
  readonly thumbnails: Thumbnailer;
  readonly maxBytes: number;
  readonly allowedMimeTypes: readonly string[];
  /** `POST /img` → the new row, for `{"data": photo}`. */
  upload(req: RequestStream, jwt: Jwt | null): Promise<PhotoRow>;
  /** The row, if it exists and `canView` allows. */
  get(id: string, jwt: Jwt | null): Promise<PhotoRow>;
  /** `GET|HEAD /img/{id}[?thumb=WxH]`: authorizes, then writes the whole answer. */
  serve(req: RequestHead, out: Sink, id: string, jwt: Jwt | null, thumb: string | null | undefined): Promise<void>;
  /** `DELETE /img/{id}` → answer 204 when it resolves. */
  delete(id: string, jwt: Jwt | null): Promise<void>;
  /** 'down' while the store cannot be reached (object storage); the file store is always 'up'. */
  storageHealth(): Promise<'up' | 'down'>;
  /** Removes what a crash left (bytes without a row), then keeps sweeping in the background. */
  startRecovery(): Promise<void>;
  stopRecovery(): Promise<void>;
}

/** Unset rules take the documented defaults (docs/reference/photos.md); a set rule allows only on a literal `true`. */
async function allows<A extends unknown[]>(rule: ((...args: A) => Verdict) | undefined, byDefault: boolean, ...args: A): Promise<boolean> {
  if (!rule) return byDefault;
  return (await rule(...args)) === true;
}

export function createPhotoService(config: PhotoServiceOptions): PhotoService {
  const photoOptions = config.options ?? {};
  const rules = photoOptions.rules ?? {};
  const maxBytes = photoOptions.maxBytes ?? DEFAULT_PHOTO_MAX_BYTES;
  const allowedMimeTypes = photoOptions.allowedMimeTypes ?? DEFAULT_PHOTO_MIME_TYPES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new Error('photos.maxBytes must be a positive whole number');
  const store = config.store ?? new FsBlobStore(join(config.dataDir, 'photos'));
  const thumbnails = new Thumbnailer(store);
  const report = config.onError ?? (() => {});
  const recovery = new PhotoRecovery({ store, hasRow: async (id) => (await config.repo.get(id)) !== null, report, ...config.recovery });

  async function find(id: string): Promise<PhotoRow> {
    const row = PHOTO_ID.test(id) ? await config.repo.get(id) : null;
    if (!row) throw new ApiError('NOT_FOUND', 'No such photo');
    return row;
  }

  async function get(id: string, jwt: Jwt | null): Promise<PhotoRow> {
    const photo = await find(id);
    if (!(await allows(rules.canView, true, jwt, photo))) throw new ApiError('FORBIDDEN');
    return photo;
  }

  return {
    store,
    thumbnails,
    maxBytes,
    allowedMimeTypes,

    async upload(req, jwt) {
      // Limits before rules (docs/reference/photos.md): an oversized or wrong-typed body is 413 / 415 for everyone.
      const received = await receiveUpload(req, { maxBytes, allowedMimeTypes, tempDir: store.tempDir });
      let mark: string | null = null;
      let id: string | null = null;
      try {
        if (!(await allows(rules.canUpload, false, jwt))) throw new ApiError('FORBIDDEN');
        id = config.newId();
        if (!PHOTO_ID.test(id)) throw new Error(`newId produced "${id}", not a photo id`);
        const row: PhotoRow = {
          id,
          mimeType: received.mimeType,
          size: received.size,
          ownerId: jwt?.userId ?? null,
          width: received.width,
          height: received.height,
          createdAt: config.now(),
        };
        // The mark outlives a kill -9 between storing the bytes and the row (recovery.ts).
        mark = await markPending(store, id);
        await store.commit(received.tempPath, id);
        await config.repo.insert(row);
        await clearPending(mark);
        return row;
      } catch (err) {
        await rm(received.tempPath, { force: true });
        // The row never made it: the bytes it would have pointed at must not linger. A store that
        // failed mid-way may still hold some, so they are removed whenever a mark was written; if
        // that fails too, the mark stays for the sweep.
        if (mark && id) {
          const removed = await store.delete(id).then(
            () => true,
            (e: unknown) => (report(e, 'removing the blob of a failed photo insert'), false),
          );
          if (removed) await clearPending(mark);
        }
        throw err;
      }
    },

    get,

    async serve(req, out, id, jwt, thumb) {
      const photo = await get(id, jwt);
      // Rules before shape (docs/reference/rules-and-hooks.md): a denied caller gets 403 even with a malformed thumb.
      const size = parseThumb(thumb);
      await servePhoto(req, out, { photo, store, thumb: size, thumbnails });
    },

    async delete(id, jwt) {
      const photo = await find(id);
      if (!(await allows(rules.canDelete, false, jwt, photo))) throw new ApiError('FORBIDDEN');
      // The row is the record of truth: remove it first, so a crash leaves at worst an orphan file.
      await config.repo.delete(id);
      await store.delete(id).catch((e: unknown) => report(e, `removing the files of photo ${id}`));
    },

    storageHealth: () => store.health(),
    startRecovery: () => recovery.start(),
    stopRecovery: () => recovery.stop(),
  };
}
