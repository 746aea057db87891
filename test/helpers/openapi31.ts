/**
 * A mechanical OpenAPI 3.0 → 3.1 upgrade, following the OpenAPI Initiative's migration notes
 * ("Upgrading from OpenAPI 3.0 to 3.1"): `nullable` becomes a `"null"` type (and a null enum
 * member), boolean `exclusiveMinimum`/`exclusiveMaximum` become numbers, schema `example` becomes
 * `examples`, binary strings become `contentMediaType`. It reports what it cannot convert without
 * changing meaning — `nullable` without a `type`, and `$ref` with sibling keywords (ignored in 3.0,
 * applied in 3.1) — so "converts cleanly" means: no problems, and the result lints and validates
 * as 3.1.
 */
type Json = Record<string, unknown>;

export interface Upgrade {
  doc: Json;
  problems: string[];
}

const SUBSCHEMA_MAPS = ['properties', 'patternProperties'];
const SUBSCHEMA_LISTS = ['allOf', 'oneOf', 'anyOf'];
const SUBSCHEMAS = ['items', 'not', 'additionalProperties'];

export function upgradeTo31(input: Json): Upgrade {
  const doc = structuredClone(input) as Json;
  const problems: string[] = [];
  doc.openapi = '3.1.0';

  const schema = (s: unknown, at: string): void => {
    if (!s || typeof s !== 'object') return;
    const o = s as Json;
    if ('$ref' in o) {
      const siblings = Object.keys(o).filter((k) => k !== '$ref' && k !== 'description' && k !== 'summary');
      if (siblings.length) problems.push(`${at}: $ref with ${siblings.join(', ')} (ignored in 3.0, applied in 3.1)`);
      return;
    }
    if ('nullable' in o) {
      if (o.nullable === true) {
        if (typeof o.type === 'string') o.type = [o.type, 'null'];
        else problems.push(`${at}: nullable without a type`);
        if (Array.isArray(o.enum) && !o.enum.includes(null)) o.enum = [...o.enum, null];
      }
      delete o.nullable;
    }
    for (const [flag, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      if (o[flag] === true) {
        o[flag] = o[bound];
        delete o[bound];
      } else if (o[flag] === false) delete o[flag];
    }
    if ('example' in o) {
      o.examples = [o.example];
      delete o.example;
    }
    if (o.type === 'string' && (o.format === 'binary' || o.format === 'byte')) {
      if (o.format === 'binary') o.contentMediaType = 'application/octet-stream';
      else o.contentEncoding = 'base64';
      delete o.format;
    }
    for (const k of SUBSCHEMA_MAPS) for (const [name, sub] of Object.entries((o[k] ?? {}) as Json)) schema(sub, `${at}/${k}/${name}`);
    for (const k of SUBSCHEMA_LISTS) (o[k] as unknown[] | undefined)?.forEach((sub, i) => schema(sub, `${at}/${k}/${i}`));
    for (const k of SUBSCHEMAS) if (typeof o[k] === 'object') schema(o[k], `${at}/${k}`);
  };

  const content = (c: unknown, at: string) => {
    for (const [type, media] of Object.entries((c ?? {}) as Json)) {
      schema((media as Json).schema, `${at}/content/${type}/schema`);
      for (const [name, enc] of Object.entries(((media as Json).encoding ?? {}) as Json))
        for (const [h, header] of Object.entries(((enc as Json).headers ?? {}) as Json)) schema((header as Json).schema, `${at}/encoding/${name}/headers/${h}/schema`);
    }
  };
  const parameter = (p: Json, at: string) => {
    schema(p.schema, `${at}/schema`);
    content(p.content, at);
  };
  const response = (r: Json, at: string) => {
    content(r.content, at);
    for (const [h, header] of Object.entries((r.headers ?? {}) as Json)) parameter(header as Json, `${at}/headers/${h}`);
  };

  const c = (doc.components ?? {}) as Json;
  for (const [n, s] of Object.entries((c.schemas ?? {}) as Json)) schema(s, `#/components/schemas/${n}`);
  for (const [n, p] of Object.entries((c.parameters ?? {}) as Json)) parameter(p as Json, `#/components/parameters/${n}`);
  for (const [n, p] of Object.entries((c.headers ?? {}) as Json)) parameter(p as Json, `#/components/headers/${n}`);
  for (const [n, r] of Object.entries((c.responses ?? {}) as Json)) response(r as Json, `#/components/responses/${n}`);
  for (const [n, b] of Object.entries((c.requestBodies ?? {}) as Json)) content((b as Json).content, `#/components/requestBodies/${n}`);
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    const at = `#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    for (const p of ((item as Json).parameters ?? []) as Json[]) parameter(p, `${at}/parameters`);
    for (const [method, op] of Object.entries(item as Json)) {
      if (typeof op !== 'object' || Array.isArray(op) || method === 'parameters') continue;
      (((op as Json).parameters ?? []) as Json[]).forEach((p, i) => parameter(p, `${at}/${method}/parameters/${i}`));
      if ((op as Json).requestBody) content(((op as Json).requestBody as Json).content, `${at}/${method}/requestBody`);
      for (const [status, r] of Object.entries(((op as Json).responses ?? {}) as Json)) response(r as Json, `${at}/${method}/responses/${status}`);
    }
  }
  return { doc, problems };
}
