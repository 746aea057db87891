/**
 * TypeBox schemas are JSON Schema (draft 2019-09 style); OpenAPI 3.0.3 speaks an older dialect.
 * The differences that matter here: `const` → a one-value `enum`, a union with `null` →
 * `nullable: true`, a `x-tablebase-model` node → the model's schema, `patternProperties` (Type.Record) → `additionalProperties`, and TypeBox's symbol-keyed metadata dropped (plain JSON out).
 */
import type { JsonSchema } from './values.js';

/** A node carrying this key is replaced by the model schema it names (see http/declare.ts). */
const MODEL_KEY = 'x-tablebase-model';

export function toOpenApiSchema(schema: unknown, model?: (name: string) => JsonSchema): JsonSchema {
  return convert(JSON.parse(JSON.stringify(schema)) as JsonSchema, model);
}

function convert(s: JsonSchema, model: ((name: string) => JsonSchema) | undefined): JsonSchema {
  if (Array.isArray(s)) return s.map((x) => convert(x as JsonSchema, model)) as unknown as JsonSchema;
  if (typeof s !== 'object' || s === null) return s;
  if (model && typeof s[MODEL_KEY] === 'string') return model(s[MODEL_KEY]);
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(s)) out[k] = typeof v === 'object' && v !== null ? (k === 'example' || k === 'default' ? v : convert(v as JsonSchema, model)) : v;
  if (out.patternProperties) {
    // Type.Record: OpenAPI 3.0 has no patternProperties; any key → additionalProperties.
    const values = Object.values(out.patternProperties as Record<string, JsonSchema>);
    delete out.patternProperties;
    out.additionalProperties = values.length === 1 ? values[0] : true;
  }
  if ('const' in out) {
    out.enum = [out.const];
    delete out.const;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alts = out[key] as JsonSchema[] | undefined;
    if (!alts) continue;
    const rest = alts.filter((a) => a.type !== 'null');
    if (rest.length === alts.length) continue;
    delete out[key];
    if (rest.length === 1) Object.assign(out, rest[0], { nullable: true });
    else Object.assign(out, { [key]: rest, nullable: true });
  }
  return out;
}
