/**
 * Tables (docs/reference/dashboard.md): the list of tables and views, and one table's rows in a `table` whose column
 * headers are the JSON column names; `Previous page` / `Next page`; a header click sorts; `Filter`
 * builds a where; `New row`; a row click (or Enter) opens the row dialog. Paging, sort and filter
 * live in the URL, so the back button and reloads keep them.
 */
import type { JSX } from 'preact';
import { useLayoutEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { cellText, ErrorBox, formatTime, Link, Pager, useLoad } from '../components';
import { href, navigate } from '../router';
import { isTime, loadSchema, type Collection } from '../schema';
import { FilterForm } from './filter';
import { RowDialog } from './row-dialog';

const PAGE = 25;

type Row = Record<string, unknown> & { id: string };

export function TableList() {
  const { data, error } = useLoad(loadSchema, []);
  const group = (title: string, items: Collection[]) =>
    items.length ? (
      <section aria-label={title}>
        <h2>{title}</h2>
        <ul class="link-list">
          {items.map((c) => (
            <li key={c.name}>
              <Link href={href(['tables', c.name])}>{c.name}</Link>
              <span class="muted"> {c.kind === 'view' ? 'view' : c.auth ? (c.auth.admin ? 'admin auth table' : 'auth table') : `${c.columns.length} columns`}</span>
            </li>
          ))}
        </ul>
      </section>
    ) : null;
  return (
    <section aria-labelledby="tables-title">
      <h1 id="tables-title">Tables</h1>
      <ErrorBox message={error} />
      {data ? (
        <div class="cols">
          {group(
            'Tables',
            data.filter((c) => c.kind === 'table' && !c.internal),
          )}
          {group(
            'Views',
            data.filter((c) => c.kind === 'view'),
          )}
          {group(
            'Internal tables',
            data.filter((c) => c.internal),
          )}
        </div>
      ) : null}
    </section>
  );
}

function parseWhere(raw: string | null): Record<string, unknown> | null {
  if (!raw) return null;
  try {
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export function TableScreen(props: { name: string; query: URLSearchParams }) {
  // Script time of the render that puts a page of rows into the DOM: from the start of this
  // render to the end of its commit (the browser test reports it; never asserted).
  const renderStart = performance.now();
  const { name, query } = props;
  const offset = Math.max(0, Number(query.get('offset') ?? 0) || 0);
  const sort = query.get('sort') ?? '';
  const dir = query.get('dir') === 'desc' ? 'desc' : 'asc';
  const whereText = query.get('where');
  const where = parseWhere(whereText);
  const schema = useLoad(loadSchema, []);
  const collection = schema.data?.find((c) => c.name === name);
  const [editing, setEditing] = useState<Row | null | undefined>(undefined);
  const [filterOpen, setFilterOpen] = useState(where !== null);
  const rows = useLoad(async () => {
    const page = await api<{ items: Row[]; total: number }>('GET', '/dashboard/rows', {
      table: name,
      limit: Number(query.get('limit') ?? PAGE) || PAGE,
      offset,
      ...(sort ? { order_by: [{ column: sort, direction: dir }] } : {}),
      ...(where ? { where } : {}),
    });
    return page;
  }, [name, offset, sort, dir, whereText, query.get('limit')]);
  const limit = Number(query.get('limit') ?? PAGE) || PAGE;
  useLayoutEffect(() => {
    if (rows.data && collection) performance.measure('tb-rows-render', { start: renderStart, end: performance.now(), detail: rows.data.items.length });
  }, [rows.data, collection]);

  const go = (next: Record<string, string | number | undefined>) =>
    navigate(
      href(['tables', name], { offset: offset || undefined, sort: sort || undefined, dir: sort ? dir : undefined, where: whereText ?? undefined, limit: query.get('limit') ?? undefined, ...next }),
    );
  const sortBy = (column: string) => go({ sort: column, dir: sort === column && dir === 'asc' ? 'desc' : 'asc', offset: undefined });
  const applyFilter = (w: Record<string, unknown> | null) => go({ where: w ? JSON.stringify(w) : undefined, offset: undefined });

  if (schema.error) return <ErrorBox message={schema.error} />;
  if (!schema.data) return <p class="muted">Loading…</p>;
  if (!collection) return <ErrorBox message={`No table or view named ${name}.`} />;
  // A failed load (a bad filter value) shows its error and no rows: never the previous answer's rows under it.
  const shown = rows.error ? undefined : rows.data;
  const total = shown?.total ?? 0;
  const view = collection.kind === 'view';
  const readOnly = view || collection.internal;
  const open = (row: Row) => setEditing(row);
  const onKey = (row: Row) => (e: JSX.TargetedKeyboardEvent<HTMLTableRowElement>) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      open(row);
    }
  };
  return (
    <section aria-labelledby="table-title">
      <div class="heading">
        <h1 id="table-title">
          {name} <span class="badge">{view ? 'view · read-only' : collection.internal ? 'internal · read-only' : collection.auth ? 'auth table' : 'table'}</span>
        </h1>
        <div class="toolbar">
          <button type="button" aria-expanded={filterOpen} aria-controls="filter-panel" onClick={() => setFilterOpen(!filterOpen)}>
            Filter
          </button>
          {readOnly ? null : (
            <button type="button" class="primary" onClick={() => setEditing(null)}>
              New row
            </button>
          )}
        </div>
      </div>
      {filterOpen ? (
        <div id="filter-panel">
          <FilterForm columns={collection.columns} onApply={applyFilter} active={where !== null} />
        </div>
      ) : null}
      {where ? (
        <p class="muted">
          Filter: <code>{whereText}</code>
        </p>
      ) : null}
      <ErrorBox message={rows.error} />
      <div class="scroll" tabIndex={0} aria-label={`${name} rows`} role="region">
        <table class="rows">
          <thead>
            <tr>
              {collection.columns.map((c) => (
                <th key={c.name} scope="col" aria-sort={sort === c.name ? (dir === 'asc' ? 'ascending' : 'descending') : undefined}>
                  {c.sortable ? (
                    <button type="button" class="sort" onClick={() => sortBy(c.name)}>
                      {c.name}
                      <span aria-hidden="true">{sort === c.name ? (dir === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                    </button>
                  ) : (
                    c.name
                  )}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {(shown?.items ?? []).map((row, i) => (
              <tr key={String(row.id ?? i)} tabIndex={0} class="clickable" onClick={() => open(row)} onKeyDown={onKey(row)}>
                {collection.columns.map((c) => (
                  <td key={c.name} title={isTime(c) && typeof row[c.name] === 'string' ? String(row[c.name]) : undefined}>
                    {isTime(c) ? formatTime(row[c.name]) : cellText(row[c.name])}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager
        offset={offset}
        limit={limit}
        total={shown?.total}
        summary={total === 0 ? 'No rows' : `Rows ${offset + 1}–${Math.min(offset + limit, total)} of ${total}`}
        onOffset={(o) => go({ offset: o || undefined })}
      />
      {editing !== undefined ? (
        <RowDialog
          collection={collection}
          row={editing}
          onClose={(changed) => {
            setEditing(undefined);
            if (changed) rows.reload();
          }}
        />
      ) : null}
    </section>
  );
}
