/**
 * Last passes over a built document, so it reads cleanly in standard tools (issue #16; Redocly's
 * recommended rules): every operation names a 4xx answer, and components nothing refers to are
 * left out (a project without list-of-integer columns gets no `Condition.list.integer`).
 */
import type { JsonSchema } from './values.js';

type Doc = { paths: Record<string, Record<string, JsonSchema>>; components: Record<string, Record<string, JsonSchema>> };

/**
 * Any request can be answered 400 before it reaches a route: a malformed request line or
 * headers (docs/reference/conventions.md envelope, `BAD_REQUEST`). Operations that declare no other client error say so.
 */
export function ensureClientError(doc: Doc): void {
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      const responses = (op.responses ??= {}) as Record<string, JsonSchema>;
      if (Object.keys(responses).some((code) => /^4(\d\d|XX)$/.test(code))) continue;
      responses['400'] = { $ref: '#/components/responses/BadRequest' };
    }
  }
}

/** Removes components (schemas, responses, headers, parameters, …) that no path reaches. */
export function pruneUnused(doc: Doc): void {
  const used = new Set<string>();
  const pending: unknown[] = [doc.paths];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach((n) => pending.push(n));
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') && !used.has(v)) {
          used.add(v);
          const [, , section, name] = v.split('/');
          pending.push(doc.components[section!]?.[unescape(name!)]);
        } else if (k === 'mapping' && v && typeof v === 'object') pending.push(Object.values(v).map(($ref) => ({ $ref })));
        else pending.push(v);
      }
    }
  };
  while (pending.length) visit(pending.pop());
  for (const [section, entries] of Object.entries(doc.components)) {
    if (section === 'securitySchemes') continue; // referenced by name from `security`, not by $ref
    for (const name of Object.keys(entries)) if (!used.has(`#/components/${section}/${escape(name)}`)) delete entries[name];
    if (Object.keys(entries).length === 0) delete doc.components[section];
  }
}

// JSON pointer escaping (RFC 6901): `~` → `~0`, `/` → `~1`.
const escape = (name: string) => name.replaceAll('~', '~0').replaceAll('/', '~1');
const unescape = (name: string) => name.replaceAll('~1', '/').replaceAll('~0', '~');
