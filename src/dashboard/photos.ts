/**
 * Admin photo listing and deletion (docs/reference/dashboard.md Photos). Deletion skips the project's canDelete (an
 * admin decided) but follows the service's order: the row first, then the files.
 */
import type { Runtime } from '../core/runtime.js';
import type { Jwt } from '../define/types.js';
import type { RequestHead, Sink } from '../core/sink.js';
import { parseThumb, servePhoto, type PhotoRepo, type PhotoService } from '../photos/index.js';
import { ApiError } from '../core/errors.js';
import { countRows, selectRows } from '../storage/rows.js';
import { MATCH_ALL } from '../storage/plan.js';
import { auditAdmin } from './audit.js';

export function adminPhotos(rt: Runtime, photos: PhotoService, repo: PhotoRepo) {
  const c = rt.model.collections.get('_photos')!;
  return {
    /** Newest first. */
    async list(limit: number, offset: number) {
      const created = c.columns.get('createdAt');
      const orderBy = [...(created ? [{ column: created, direction: 'desc' as const }] : []), { column: c.columns.get('id')!, direction: 'desc' as const }];
      const plan = { collection: c, where: MATCH_ALL, orderBy, limit, offset };
      const [items, total] = await Promise.all([selectRows(rt.driver, rt.driver.dialect, plan), countRows(rt.driver, rt.driver.dialect, { ...plan, orderBy: [] })]);
      return { items, total };
    },

    /**
     * A photo or its thumbnail for the Photos grid: not rate-limited like GET /img (a page of
     * thumbnails would spend a minute's budget) and not subject to the project's canView.
     */
    async serve(head: RequestHead, out: Sink, id: string, thumb: string | undefined): Promise<void> {
      const photo = await repo.get(id);
      if (!photo) throw new ApiError('NOT_FOUND', 'No such photo');
      await servePhoto(head, out, { photo, store: photos.store, thumb: parseThumb(thumb), thumbnails: photos.thumbnails });
    },

    async delete(admin: Jwt, id: string): Promise<void> {
      if (!(await repo.get(id))) throw new ApiError('NOT_FOUND', 'No such photo');
      await repo.delete(id);
      await photos.store.delete(id).catch((err: unknown) => rt.log.error({ err, id }, 'removing photo files'));
      auditAdmin(rt.log, admin, { action: 'deletePhoto', table: '_photos', id });
    },
  };
}

export type AdminPhotos = ReturnType<typeof adminPhotos>;
