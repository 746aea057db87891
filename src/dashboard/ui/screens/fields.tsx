/**
 * One labelled input per column, typed by its kind (docs/reference/dashboard.md): checkbox for booleans, number
 * inputs for integer/real, date-time for timestamps, list and JSON editors, a picker for
 * references. Values are kept as the input's raw form and converted on save.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { isBool, isNumber, isTime, type Column } from '../schema';

/** The input's raw value: a string, or a boolean for checkboxes. */
export type Raw = string | boolean;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** ISO UTC → the local `YYYY-MM-DDTHH:mm:ss.sss` a datetime-local input shows. */
export function toLocalInput(iso: unknown): string {
  if (typeof iso !== 'string' || !iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function rawOf(c: Column, value: unknown): Raw {
  if (isBool(c)) return value === true;
  if (value === null || value === undefined) return '';
  if (isTime(c)) return toLocalInput(value);
  if (c.kind === 'list') return Array.isArray(value) ? value.map(String).join('\n') : '';
  if (c.kind === 'json') return JSON.stringify(value, null, 2);
  return String(value);
}

export class FieldError extends Error {}

/** The raw input back to a JSON value; `undefined` means "not given". */
export function valueOf(c: Column, raw: Raw, creating: boolean): unknown {
  if (isBool(c)) return raw === true;
  const s = String(raw);
  if (s.trim() === '') {
    if (creating) return undefined; // let the server apply the default, or say it is required
    if (c.kind === 'list') return [];
    return c.nullable || c.kind !== 'text' ? null : '';
  }
  if (isNumber(c)) {
    const n = Number(s);
    if (!Number.isFinite(n)) throw new FieldError('must be a number');
    return n;
  }
  if (isTime(c)) {
    const d = new Date(s);
    if (Number.isNaN(d.getTime())) throw new FieldError('must be a date and time');
    return d.toISOString();
  }
  if (c.kind === 'list') {
    const items = s
      .split('\n')
      .map((x) => x.trim())
      .filter(Boolean);
    if (c.of === 'integer' || c.of === 'real') return items.map(Number);
    if (c.of === 'boolean') return items.map((x) => x === 'true');
    return items;
  }
  if (c.kind === 'json') {
    try {
      return JSON.parse(s);
    } catch {
      throw new FieldError('must be valid JSON');
    }
  }
  return s;
}

function ReferencePicker(props: { column: Column; value: string; id: string; disabled: boolean; describedBy?: string; onChange: (v: string) => void }) {
  const [ids, setIds] = useState<string[] | null>(null);
  useEffect(() => {
    api<{ items: { id: string }[] }>('GET', '/dashboard/rows', { table: props.column.references, limit: 200 }).then(
      (page) => setIds(page.items.map((r) => r.id)),
      () => setIds([]),
    );
  }, [props.column.references]);
  const options = ids ?? [];
  if (props.value && !options.includes(props.value)) options.unshift(props.value);
  return (
    <select id={props.id} value={props.value} disabled={props.disabled} aria-describedby={props.describedBy} onChange={(e) => props.onChange(e.currentTarget.value)}>
      <option value="">{props.column.nullable ? '(none)' : '(choose a row)'}</option>
      {options.map((id) => (
        <option key={id} value={id}>
          {id}
        </option>
      ))}
    </select>
  );
}

export function Field(props: { column: Column; raw: Raw; readOnly: boolean; error?: string; autoFocus?: boolean; onChange: (raw: Raw) => void }) {
  const c = props.column;
  const id = `field-${c.name}`;
  const errId = props.error ? `${id}-error` : undefined;
  const hintId = `${id}-hint`;
  const describedBy = [errId, hintId].filter(Boolean).join(' ');
  const common = { id, 'aria-invalid': props.error ? true : undefined, 'aria-describedby': describedBy, autoFocus: props.autoFocus };
  const set = (v: Raw) => props.onChange(v);
  let input;
  if (isBool(c)) input = <input type="checkbox" {...common} checked={props.raw === true} disabled={props.readOnly} onChange={(e) => set(e.currentTarget.checked)} />;
  else if (c.references && !props.readOnly) input = <ReferencePicker column={c} value={String(props.raw)} id={id} disabled={props.readOnly} describedBy={describedBy} onChange={set} />;
  else if (c.kind === 'list' || c.kind === 'json')
    input = <textarea {...common} rows={c.kind === 'json' ? 5 : 3} readOnly={props.readOnly} spellcheck={false} value={String(props.raw)} onInput={(e) => set(e.currentTarget.value)} />;
  else {
    const type = isNumber(c) ? 'number' : isTime(c) ? 'datetime-local' : 'text';
    const step = c.kind === 'integer' ? '1' : c.kind === 'real' ? 'any' : isTime(c) ? '0.001' : undefined;
    input = <input type={type} step={step} {...common} readOnly={props.readOnly} value={String(props.raw)} onInput={(e) => set(e.currentTarget.value)} />;
  }
  const hint = [
    c.kind === 'list' ? `list of ${c.of ?? 'text'}, one per line` : c.kind,
    c.references ? `→ ${c.references}` : '',
    c.managed ? 'set by the server' : c.required ? 'required' : c.nullable ? 'nullable' : c.hasDefault ? `default ${JSON.stringify(c.default)}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    <div class={`field${isBool(c) ? ' check' : ''}`}>
      <label for={id}>{c.name}</label>
      {input}
      <small id={hintId} class="muted">
        {hint}
      </small>
      {props.error ? (
        <small id={errId} class="field-error">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}
