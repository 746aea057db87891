/**
 * docs/reference/http-api.md: every route the server answers, rendered from the OpenAPI document
 * that the route declarations produce for examples/conformance (the same document `/swagger.json`
 * serves), so the page lists exactly what the code declares.
 */
import type { DeclaredRoute, Family } from '../../src/http/declare.js';
import { openApiPath, type JsonSchema } from '../../src/openapi/context.js';
import type { OpenApiDocument } from '../../src/openapi/index.js';

/** Where each family's declarations live: the link from a route to its handler. */
const FAMILY_FILE: Record<Family, string> = {
  data: 'src/http/routes/data.ts',
  stream: 'src/http/routes/stream.ts',
  photos: 'src/http/routes/photos.ts',
  auth: 'src/http/routes/auth.ts',
  dashboard: 'src/http/routes/dashboard.ts',
  email: 'src/http/routes/email.ts',
  push: 'src/http/routes/push.ts',
  system: 'src/http/routes/system.ts',
};

const FAMILY_TITLE: Record<Family, string> = {
  data: 'Data: `/db`',
  stream: 'Live reads: `/db/stream*` and `/db/live`',
  photos: 'Photos: `/img`',
  auth: 'Sign-in and accounts: `/auth/*`',
  dashboard: 'Admin API: `/dashboard/*` and the dashboard page `/_`',
  email: 'Email: `/email`',
  push: 'Push notifications: `/push/*`',
  system: 'The document and health: `/swagger.json`, `/swagger.yaml`, `/health`',
};

const ACCESS: Record<string, string> = {
  public: 'anyone; no token is read',
  optional: 'anyone; a token, when sent, must be valid (401 `INVALID_TOKEN`), and the rules see it (`null` without one)',
  bearer: 'a valid access token (401 `UNAUTHENTICATED` without one)',
  admin: "an admin's access token (401 without a token, 403 `FORBIDDEN` for any other)",
};

/** Where a route's handler lives: the route files are split per family, a sign-in route in its own file. */
function fileOf(route: DeclaredRoute): string {
  if (route.family === 'auth' && /\/(otp|magic-link|change-email|oauth)/.test(route.path)) return 'src/http/routes/signin.ts';
  if (route.family === 'dashboard' && route.path.startsWith('/_')) return 'src/http/routes/dashboard-page.ts';
  return FAMILY_FILE[route.family];
}

const anchorOf = (route: DeclaredRoute) =>
  `${route.method}-${route.path}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/-+$/, '');
const docPath = openApiPath;

function deref(doc: OpenApiDocument, s: JsonSchema | undefined): JsonSchema | undefined {
  let cur = s;
  for (let i = 0; cur && typeof cur.$ref === 'string' && i < 8; i++) {
    const [, kind, name] = /^#\/components\/([^/]+)\/(.+)$/.exec(cur.$ref as string) ?? [];
    cur = kind && name ? (doc.components[kind]?.[name] as JsonSchema | undefined) : undefined;
  }
  return cur;
}

function typeText(doc: OpenApiDocument, s: JsonSchema | undefined): string {
  const r = deref(doc, s);
  if (!r) return 'any';
  if (s?.$ref) {
    const name = String(s.$ref).split('/').pop()!;
    if (!r.enum) return `\`${name}\``;
  }
  if (Array.isArray(r.enum)) return r.enum.map((v: unknown) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (Array.isArray(r.oneOf) || Array.isArray(r.anyOf)) return ((r.oneOf ?? r.anyOf) as JsonSchema[]).map((x) => typeText(doc, x)).join(' or ');
  if (r.type === 'array') return `array of ${typeText(doc, r.items as JsonSchema)}`;
  const fmt = r.format ? ` (${String(r.format)})` : '';
  return `${String(r.type ?? 'object')}${fmt}`;
}

const cell = (s: unknown) =>
  String(s ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\n+/g, ' ');

/** A properties table for an object schema; a per-table union shows the conformance `tasks` member. */
function schemaText(doc: OpenApiDocument, schema: JsonSchema | undefined): string[] {
  let s = deref(doc, schema);
  const out: string[] = [];
  const members = (s?.oneOf ?? s?.anyOf) as JsonSchema[] | undefined;
  if (s && members && s.discriminator) {
    const mapping = (s.discriminator as { mapping?: Record<string, string> }).mapping ?? {};
    const pick = mapping.tasks ?? Object.values(mapping)[0];
    out.push(
      `One schema per table, chosen by \`table\` (\`<table>.${String(pick ?? '')
        .split('.')
        .pop()}\` in your project's \`/swagger.json\`). For the conformance project's \`tasks\`:`,
      '',
    );
    s = deref(doc, { $ref: pick });
  }
  const props = s?.properties as Record<string, JsonSchema> | undefined;
  if (!props || Object.keys(props).length === 0) return out;
  const required = new Set((s!.required as string[] | undefined) ?? []);
  out.push('| Field | Type | Required | Notes |', '|---|---|---|---|');
  for (const [name, p] of Object.entries(props)) {
    const d = deref(doc, p);
    const notes = [d?.description, d?.maxLength !== undefined ? `at most ${String(d.maxLength)} characters` : undefined, d?.maximum !== undefined ? `at most ${String(d.maximum)}` : undefined]
      .filter(Boolean)
      .join('; ');
    out.push(`| \`${name}\` | ${cell(typeText(doc, p))} | ${required.has(name) ? 'yes' : 'no'} | ${cell(notes)} |`);
  }
  return out;
}

function example(media: JsonSchema | undefined): string[] {
  if (media?.example === undefined) return [];
  return ['', 'Example:', '', '```json', JSON.stringify(media.example), '```'];
}

function routeSection(doc: OpenApiDocument, route: DeclaredRoute): string[] {
  const op = doc.paths[docPath(route.path)]?.[route.method.toLowerCase()] as JsonSchema | undefined;
  const d = route.declaration;
  const out = [`### \`${route.method} ${route.path}\` — ${route.summary}`, ''];
  if (typeof op?.description === 'string') out.push(op.description, '');
  out.push(`- **Who may call:** ${ACCESS[d.access] ?? d.access}${d.rule ? '; then a project rule decides (403 `FORBIDDEN` when it refuses)' : ''}.`);
  const rl = d.rateLimit;
  if (rl)
    out.push(
      `- **Rate limit:** ${typeof rl === 'function' ? 'per client IP, keyed by the table and operation the request names' : `per client IP, key \`${rl.table}\` × \`${rl.op}\``} ([rate-limits.md](rate-limits.md)).`,
    );
  else out.push('- **Rate limit:** none.');
  out.push(`- **Handler:** [\`${fileOf(route)}\`](../../${fileOf(route)}).`, '');
  const params = ((op?.parameters ?? []) as JsonSchema[]).filter((p) => p.name !== 'body' || p.in !== 'query');
  if (params.length) {
    out.push('Parameters:', '', '| Name | In | Type | Required | Notes |', '|---|---|---|---|---|');
    for (const p of params) out.push(`| \`${String(p.name)}\` | ${String(p.in)} | ${cell(typeText(doc, p.schema as JsonSchema))} | ${p.required ? 'yes' : 'no'} | ${cell(p.description)} |`);
    out.push('');
  }
  const queryBody = ((op?.parameters ?? []) as JsonSchema[]).find((p) => p.name === 'body' && p.in === 'query');
  const bodyMedia =
    (queryBody?.content as Record<string, JsonSchema> | undefined)?.['application/json'] ??
    ((op?.requestBody as JsonSchema | undefined)?.content as Record<string, JsonSchema> | undefined)?.['application/json'];
  if (bodyMedia) {
    out.push(queryBody ? 'Body (JSON, URL-encoded in `?body=`; a JSON request body is accepted too):' : 'Body (JSON, `Content-Type: application/json`):', '');
    out.push(...schemaText(doc, bodyMedia.schema as JsonSchema), ...example(bodyMedia), '');
  } else if (op?.requestBody) {
    const types = Object.keys(((op.requestBody as JsonSchema).content ?? {}) as object);
    out.push(`Body: ${types.map((t) => `\`${t}\``).join(', ')}.`, '');
  }
  out.push('Answers:', '', '| Status | Meaning |', '|---|---|');
  for (const [status, r] of Object.entries((op?.responses ?? {}) as Record<string, JsonSchema>)) {
    const resolved = deref(doc, r);
    out.push(`| ${status} | ${cell(resolved?.description)} |`);
  }
  out.push('');
  return out;
}

export function httpApiPage(doc: OpenApiDocument, routes: readonly DeclaredRoute[]): string {
  const documented = routes.filter((r) => doc.paths[docPath(r.path)]?.[r.method.toLowerCase()]);
  const families = [...new Set(documented.map((r) => r.family))];
  const out = [
    '<!-- Generated by `npm run docs:reference` from the route declarations (src/http/routes/); do not edit by hand. -->',
    '# HTTP API reference',
    '',
    'Every route Tablebase answers, in the order of the route table ([`src/http/routes.ts`](../../src/http/routes.ts)). Each',
    'entry names who may call it, its rate limit, its body, its answers and the file that declares its handler.',
    'The conventions every route shares — the `{"data": …}` and `{"error": …}` envelopes, GET bodies in `?body=`,',
    'request ids, CORS and body limits — are in [conventions.md](conventions.md); every error code in',
    '[errors.md](errors.md). A running server describes the same routes, with your own tables in the schemas, at',
    '`/swagger.json` and `/swagger.yaml`.',
    '',
    '## Contents',
    '',
  ];
  for (const f of families) {
    out.push(`- ${FAMILY_TITLE[f]}`);
    for (const r of documented.filter((x) => x.family === f)) out.push(`  - [\`${r.method} ${r.path}\`](#${anchorOf(r)}) — ${r.summary}`);
  }
  out.push('');
  for (const f of families) {
    out.push(`## ${FAMILY_TITLE[f]}`, '');
    for (const r of documented.filter((x) => x.family === f)) out.push(`<a id="${anchorOf(r)}"></a>`, '', ...routeSection(doc, r));
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
