/** Photos (docs/reference/dashboard.md): a grid of thumbnails with size, type, owner and date; `Delete`. */
import { useEffect, useState } from 'preact/hooks';
import type { PhotoRow } from '../../../define/project';
import { api, ApiFailure, imageUrl } from '../api';
import { ErrorBox, formatBytes, formatTime, Pager, useLoad } from '../components';

/** The server's `_photos` row (type-only import: nothing of the server is bundled). */
type Photo = PhotoRow;

/** Thumbnails come through fetch with the admin token, shown from blob: URLs (the CSP allows those). */
function Thumb(props: { photo: Photo }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let url: string | null = null;
    imageUrl(`/dashboard/photos/${encodeURIComponent(props.photo.id)}?thumb=240x240`).then(
      (u) => setSrc((url = u)),
      () => setSrc(null),
    );
    return () => {
      if (url) URL.revokeObjectURL(url);
    };
  }, [props.photo.id]);
  return src ? <img src={src} alt={`Photo ${props.photo.id}`} width={160} height={160} /> : <div class="thumb-missing" role="img" aria-label={`Photo ${props.photo.id} (not viewable)`} />;
}

export function Photos() {
  const [offset, setOffset] = useState(0);
  const photos = useLoad(() => api<{ items: Photo[]; total: number }>('GET', `/dashboard/photos?limit=48&offset=${offset}`), [offset]);
  const [error, setError] = useState<string | null>(null);
  const remove = async (p: Photo) => {
    if (!window.confirm(`Delete photo ${p.id}?`)) return;
    try {
      await api('DELETE', `/dashboard/photos/${encodeURIComponent(p.id)}`);
      photos.reload();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  const items = photos.data?.items ?? [];
  return (
    <section aria-labelledby="photos-title">
      <h1 id="photos-title">Photos</h1>
      <ErrorBox message={photos.error ?? error} />
      {photos.data && items.length === 0 ? <p class="muted">No photos yet.</p> : null}
      <ul class="photo-grid">
        {items.map((p) => (
          <li key={p.id}>
            <figure>
              <Thumb photo={p} />
              <figcaption>
                <span class="mono">{p.id}</span>
                <span>
                  {formatBytes(p.size)} · {p.mimeType} · {p.width ?? '?'}×{p.height ?? '?'}
                </span>
                <span>owner {p.ownerId ?? '—'}</span>
                <span>{formatTime(p.createdAt)}</span>
              </figcaption>
            </figure>
            <button type="button" class="danger" onClick={() => remove(p)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      <Pager offset={offset} limit={48} total={photos.data?.total} summary={photos.data ? `${photos.data.total} ${photos.data.total === 1 ? 'photo' : 'photos'}` : ''} onOffset={setOffset} />
    </section>
  );
}
