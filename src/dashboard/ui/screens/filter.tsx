/** The `Filter` control (docs/reference/dashboard.md Tables): column, operator and value build a `where` (docs/reference/data.md). */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { isBool, isNumber, operatorsFor, type Column } from '../schema';

function scalar(c: Column, kind: string, raw: string): unknown {
  if (kind === 'integer' || kind === 'real') return raw.trim() === '' ? raw : Number(raw);
  if (kind === 'boolean' || kind === 'isVerified') return raw.trim().toLowerCase() === 'true';
  if (c.kind !== 'list' && (c.kind === 'timestamp' || c.kind.endsWith('At') || c.kind === 'updatedWhen') && /^\d+$/.test(raw)) return Number(raw);
  return raw;
}

/** Turns the form's three values into a where; the server checks it (a 400 shows as an alert). */
export function buildWhere(c: Column, op: string, raw: string): Record<string, unknown> {
  if (op === 'isNull') return { [c.name]: { isNull: raw.trim().toLowerCase() !== 'false' } };
  const kind = c.kind === 'list' ? (c.of ?? 'text') : c.kind;
  if (op === 'in' || op === 'nin')
    return {
      [c.name]: {
        [op]: raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((s) => scalar(c, kind, s)),
      },
    };
  return { [c.name]: { [op]: scalar(c, kind, raw) } };
}

export function FilterForm(props: { columns: readonly Column[]; onApply: (where: Record<string, unknown> | null) => void; active: boolean }) {
  const columns = props.columns.filter((c) => operatorsFor(c).length > 0);
  const [name, setName] = useState(columns[0]?.name ?? '');
  const column = columns.find((c) => c.name === name) ?? columns[0];
  const ops = column ? operatorsFor(column) : [];
  const [op, setOp] = useState('eq');
  const operator = ops.includes(op) ? op : (ops[0] ?? 'eq');
  const [value, setValue] = useState('');
  const submit = (e: JSX.TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (column) props.onApply(buildWhere(column, operator, value));
  };
  const hint =
    column && operator === 'isNull'
      ? 'true or false'
      : operator === 'in' || operator === 'nin'
        ? 'comma-separated values'
        : column && isBool(column)
          ? 'true or false'
          : column && isNumber(column)
            ? 'a number'
            : '';
  return (
    <form class="filter" aria-label="Filter" onSubmit={submit}>
      <label>
        Column
        <select value={column?.name} onChange={(e) => setName(e.currentTarget.value)}>
          {columns.map((c) => (
            <option key={c.name} value={c.name}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Operator
        <select value={operator} onChange={(e) => setOp(e.currentTarget.value)}>
          {ops.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </label>
      <label>
        Value
        <input value={value} placeholder={hint} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary">
        Apply filter
      </button>
      {props.active ? (
        <button type="button" onClick={() => props.onApply(null)}>
          Clear filter
        </button>
      ) : null}
    </form>
  );
}
