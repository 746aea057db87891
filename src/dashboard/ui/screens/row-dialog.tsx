/**
 * The row editor (docs/reference/dashboard.md Tables): a modal `dialog` with one labelled input per column and
 * `Save`, `Delete` (after a confirmation) and `Cancel`. Server validation errors appear next to
 * their fields and as a role=alert; views open read-only.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiFailure } from '../api';
import type { Collection } from '../schema';
import { Field, FieldError, rawOf, valueOf, type Raw } from './fields';

type Row = Record<string, unknown> & { id: string };

export function RowDialog(props: { collection: Collection; row: Row | null; onClose: (changed: boolean) => void }) {
  const { collection, row } = props;
  const creating = row === null;
  const readOnly = collection.kind === 'view' || collection.internal;
  const columns = collection.columns.filter((c) => !(creating && c.managed));
  const ref = useRef<HTMLDialogElement>(null);
  const [raw, setRaw] = useState<Record<string, Raw>>(() =>
    Object.fromEntries(columns.map((c) => [c.name, rawOf(c, creating ? (c.hasDefault && typeof c.default !== 'string' ? c.default : undefined) : row[c.name])])),
  );
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    return () => d.open && d.close();
  }, []);

  const fail = (err: unknown) => {
    const f = err instanceof ApiFailure ? err : null;
    const byField: Record<string, string> = {};
    for (const d of f?.details ?? []) {
      const name = d.path.split('/')[2];
      if (name) byField[name] = d.message;
    }
    setFieldErrors(byField);
    setError(f ? f.message : err instanceof Error ? err.message : String(err));
    setBusy(false);
  };

  const save = async (e: JSX.TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (readOnly) return;
    const values: Record<string, unknown> = {};
    const local: Record<string, string> = {};
    for (const c of columns) {
      if (c.managed) continue;
      try {
        const v = valueOf(c, raw[c.name] ?? '', creating);
        if (v === undefined) continue;
        if (!creating && JSON.stringify(v) === JSON.stringify(row[c.name] ?? null)) continue;
        values[c.name] = v;
      } catch (err) {
        if (err instanceof FieldError) local[c.name] = err.message;
        else throw err;
      }
    }
    if (Object.keys(local).length) {
      setFieldErrors(local);
      setError('Some fields are not valid.');
      return;
    }
    if (!creating && Object.keys(values).length === 0) return props.onClose(false);
    setBusy(true);
    setError(null);
    try {
      if (creating) await api('POST', '/dashboard/rows', { table: collection.name, object: values });
      else await api('PATCH', '/dashboard/rows', { table: collection.name, id: row.id, values });
      props.onClose(true);
    } catch (err) {
      fail(err);
    }
  };

  const remove = async () => {
    setBusy(true);
    try {
      await api('DELETE', '/dashboard/rows', { table: collection.name, id: row!.id });
      props.onClose(true);
    } catch (err) {
      setConfirming(false);
      fail(err);
    }
  };

  const firstEditable = readOnly ? undefined : columns.find((c) => !c.managed)?.name;
  const title = creating ? `New row in ${collection.name}` : `${readOnly ? 'Row' : 'Edit row'} ${row.id ?? ''}`;
  return (
    <dialog
      ref={ref}
      aria-labelledby="row-dialog-title"
      class="row-dialog"
      onCancel={(e) => {
        e.preventDefault();
        props.onClose(false);
      }}
    >
      <form onSubmit={save} noValidate>
        <h2 id="row-dialog-title">{title}</h2>
        {readOnly ? <p class="muted">{collection.internal ? 'Internal tables are read-only here.' : 'Views are read-only.'}</p> : null}
        {error ? (
          <p role="alert" class="error">
            {error}
          </p>
        ) : null}
        <div class="fields">
          {columns.map((c) => (
            <Field
              key={c.name}
              autoFocus={c.name === firstEditable}
              column={c}
              raw={raw[c.name] ?? ''}
              readOnly={readOnly || c.managed}
              error={fieldErrors[c.name]}
              onChange={(v) => setRaw((r) => ({ ...r, [c.name]: v }))}
            />
          ))}
        </div>
        {confirming ? (
          <div class="confirm" role="group" aria-label="Confirm deletion">
            <p>Delete this row? This cannot be undone.</p>
            <button type="button" class="danger" onClick={remove} disabled={busy}>
              Confirm delete
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep row
            </button>
          </div>
        ) : null}
        <div class="actions">
          {readOnly ? null : (
            <button type="submit" class="primary" disabled={busy}>
              Save
            </button>
          )}
          {readOnly || creating ? null : (
            <button type="button" class="danger" onClick={() => setConfirming(true)} disabled={busy || confirming}>
              Delete
            </button>
          )}
          <button type="button" onClick={() => props.onClose(false)}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
