/** API (docs/reference/dashboard.md): the project's OpenAPI document as browsable docs, grouped by tag. */
import { useState } from 'preact/hooks';
import { ErrorBox, useLoad } from '../components';

type Json = Record<string, unknown>;
interface Doc {
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, unknown> };
}

async function loadDoc(): Promise<Doc> {
  const res = await fetch('/swagger.json', { credentials: 'omit' });
  if (!res.ok) throw new Error(`The OpenAPI document answered ${res.status}`);
  return (await res.json()) as Doc;
}

function Schema(props: { doc: Doc; value: unknown }) {
  const [shown, setShown] = useState<unknown>(props.value);
  const ref = (shown as Json | null)?.$ref;
  const name = typeof ref === 'string' ? ref.split('/').pop()! : null;
  return (
    <div>
      {name ? (
        <button type="button" class="link" onClick={() => setShown(props.doc.components?.schemas?.[name])}>
          Show schema {name}
        </button>
      ) : null}
      <pre class="json">{JSON.stringify(shown, null, 2)}</pre>
    </div>
  );
}

function Operation(props: { doc: Doc; method: string; path: string; op: Json }) {
  const { op } = props;
  const body = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const params = (op.parameters as Json[] | undefined) ?? [];
  const responses = (op.responses as Record<string, Json> | undefined) ?? {};
  return (
    <details class="op">
      <summary>
        <span class={`method m-${props.method}`}>{props.method.toUpperCase()}</span> <code>{props.path}</code> <span class="muted">{String(op.summary ?? '')}</span>
      </summary>
      {op.description ? <p>{String(op.description)}</p> : null}
      {params.length ? (
        <>
          <h4>Parameters</h4>
          <ul>
            {params.map((p, i) => (
              <li key={i}>
                <code>{String(p.name)}</code> in {String(p.in)}
                {p.required ? ' (required)' : ''} {p.description ? `— ${String(p.description)}` : ''}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {body ? (
        <>
          <h4>Request body</h4>
          {Object.entries(body).map(([type, media]) => (
            <div key={type}>
              <code>{type}</code>
              <Schema doc={props.doc} value={media.example ?? media.schema} />
            </div>
          ))}
        </>
      ) : null}
      <h4>Responses</h4>
      <ul>
        {Object.entries(responses).map(([status, r]) => (
          <li key={status}>
            <code>{status}</code> {String(r.description ?? (typeof r.$ref === 'string' ? r.$ref.split('/').pop() : ''))}
          </li>
        ))}
      </ul>
    </details>
  );
}

export function ApiDocs() {
  const { data: doc, error } = useLoad(loadDoc, []);
  const [q, setQ] = useState('');
  const groups = new Map<string, { method: string; path: string; op: Json }[]>();
  if (doc)
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        if (q && !`${method} ${path} ${String(op.summary ?? '')}`.toLowerCase().includes(q.toLowerCase())) continue;
        const tag = ((op.tags as string[] | undefined) ?? ['other'])[0]!;
        if (!groups.has(tag)) groups.set(tag, []);
        groups.get(tag)!.push({ method, path, op });
      }
  return (
    <section aria-labelledby="api-title">
      <h1 id="api-title">API</h1>
      <ErrorBox message={error} />
      {doc ? (
        <>
          <p>
            {doc.info.title} · version {doc.info.version} ·{' '}
            <a href="/swagger.json" target="_blank" rel="noopener">
              swagger.json
            </a>{' '}
            ·{' '}
            <a href="/swagger.yaml" target="_blank" rel="noopener">
              swagger.yaml
            </a>
          </p>
          <label class="search">
            Search routes
            <input type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
          </label>
          {[...groups].map(([tag, ops]) => (
            <section key={tag} aria-label={tag}>
              <h2>{tag}</h2>
              <p class="muted">{doc.tags?.find((t) => t.name === tag)?.description}</p>
              {ops.map((o) => (
                <Operation key={`${o.method} ${o.path}`} doc={doc} {...o} />
              ))}
            </section>
          ))}
        </>
      ) : null}
    </section>
  );
}
