/** Small shared pieces: links that route on the client, a loader hook, formatting. */
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api';
import { navigate } from './router';

export function Link(props: { href: string; children: ComponentChildren; current?: boolean; class?: string }) {
  const onClick = (e: JSX.TargetedMouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // new tab etc.
    e.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} onClick={onClick} aria-current={props.current ? 'page' : undefined} class={props.class}>
      {props.children}
    </a>
  );
}

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: string | null;
  readonly loading: boolean;
  reload(): void;
}

/** Loads on mount and when `deps` change; `everyMs` refreshes in the background. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[], everyMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const n = ++latest.current;
    setLoading(true);
    load().then(
      (d) => {
        if (n !== latest.current) return;
        setData(d);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (n !== latest.current) return;
        setError(err instanceof ApiFailure || err instanceof Error ? err.message : String(err));
        setLoading(false);
      },
    );
  }, [...deps, tick]);
  useEffect(() => {
    if (!everyMs) return;
    const t = setInterval(() => setTick((x) => x + 1), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  const reload = useCallback(() => setTick((x) => x + 1), []);
  return { data, error, loading, reload };
}

export function ErrorBox(props: { message: string | null }) {
  return props.message ? (
    <p role="alert" class="error">
      {props.message}
    </p>
  ) : null;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function formatTime(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  const d = new Date(value as string | number);
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** A cell's text for any JSON value. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function Tile(props: { label: string; value: string; hint?: string }) {
  return (
    <div class="tile" role="group" aria-label={props.label}>
      <div class="tile-label">{props.label}</div>
      <div class="tile-value">{props.value}</div>
      {props.hint ? <div class="tile-hint">{props.hint}</div> : null}
    </div>
  );
}

/** `Previous page` / `Next page` around a summary (docs/reference/dashboard.md Tables). */
export function Pager(props: { offset: number; limit: number; total: number | undefined; summary: string; onOffset: (offset: number) => void }) {
  const { offset, limit, total } = props;
  return (
    <div class="pager">
      <button type="button" disabled={offset === 0} onClick={() => props.onOffset(Math.max(0, offset - limit))}>
        Previous page
      </button>
      <span role="status">{props.summary}</span>
      <button type="button" disabled={total === undefined || offset + limit >= total} onClick={() => props.onOffset(offset + limit)}>
        Next page
      </button>
    </div>
  );
}
