/**
 * TypeScript declarations for one project: per table and view the Row, Create, Where, Update
 * and OrderBy types, the condition types of docs/reference/data.md, and the shape each collection's client is
 * typed by. The column rules (which operators, which columns may be created, updated, sorted)
 * come from src/openapi/columns.ts, the same place the OpenAPI document reads them.
 */
import type { CollectionModel, ColumnModel } from '../core/model.js';
import type { ScalarKind } from '../define/columns.js';
import {
  CONDITION_FAMILIES,
  conditionFamily,
  isCreatable,
  isNumeric,
  isRequiredOnCreate,
  isSortable,
  isTimestamp,
  isUpdatable,
  isVisible,
  OPERATORS,
  type ConditionFamily,
} from '../openapi/columns.js';

const SCALAR: Record<ScalarKind, string> = { text: 'string', integer: 'number', real: 'number', boolean: 'boolean' };
/** Filter keys the where grammar keeps for itself; a column of that name cannot be filtered. */
const COMBINATORS = new Set(['and', 'or', 'not']);

const lit = (s: string): string => JSON.stringify(s);
const union = (names: readonly string[]): string => (names.length ? names.map(lit).join(' | ') : 'never');

/** The suffixes a collection's stem is used with. */
const SUFFIXES = ['Row', 'Where', 'OrderBy', 'Create', 'Update', 'Shape', 'SignUp'];

/**
 * `cron_log` → `CronLog`: a stem per collection such that no derived name (`CronLogRow`, ...)
 * meets another collection's or one in `reserved` (the runtime's and the file's own names, so a
 * table called `auth` cannot produce a second `AuthShape`).
 */
export function typeNames(collections: readonly CollectionModel[], reserved: ReadonlySet<string> = new Set()): Map<string, string> {
  const used = new Set(reserved);
  const out = new Map<string, string>();
  for (const c of collections) {
    let base = c.name
      .split('_')
      .filter(Boolean)
      .map((w) => w[0]!.toUpperCase() + w.slice(1))
      .join('');
    if (!/^[A-Za-z]/.test(base)) base = `T${base}`;
    let name = base;
    for (let i = 2; SUFFIXES.some((s) => used.has(name + s)); i++) name = `${base}${i}`;
    for (const s of SUFFIXES) used.add(name + s);
    out.set(c.name, name);
  }
  return out;
}

function baseType(col: ColumnModel, input: boolean): string {
  const spec = col.spec;
  if (isTimestamp(col)) return input ? 'string | number' : 'string';
  switch (spec.kind) {
    case 'integer':
    case 'real':
      return 'number';
    case 'boolean':
    case 'isVerified':
      return 'boolean';
    case 'list':
      return `${SCALAR[spec.of ?? 'text']}[]`;
    case 'json':
      return 'Json';
    default:
      return 'string';
  }
}

export function columnType(col: ColumnModel, input: boolean): string {
  const t = baseType(col, input);
  return col.spec.nullable ? `${t} | null` : t;
}

export const conditionTypeName = (f: ConditionFamily): string => {
  if (f.startsWith('list.')) {
    const item = f.slice(5);
    return `${item[0]!.toUpperCase()}${item.slice(1)}ListCondition`;
  }
  return `${f[0]!.toUpperCase()}${f.slice(1)}Condition`;
};

function familyValue(f: ConditionFamily): string {
  if (f === 'text') return 'string';
  if (f === 'timestamp') return 'string | number';
  if (f === 'json') return 'Json';
  if (f.startsWith('list.')) return SCALAR[f.slice(5) as ScalarKind];
  return SCALAR[f as ScalarKind];
}

/** One interface per condition family, from the operator table the server's parser obeys. */
export function conditionTypes(): string {
  const blocks = CONDITION_FAMILIES.map((f) => {
    const v = familyValue(f);
    const arr = v.includes('|') ? `(${v})[]` : `${v}[]`;
    const fields = OPERATORS[f].map((op) => {
      if (op === 'isNull') return '  isNull?: boolean;';
      if (op === 'eq' || op === 'ne') return `  ${op}?: ${v} | null;`;
      if (op === 'in' || op === 'nin') return `  ${op}?: ${arr};`;
      if (op === 'contains' || op === 'startsWith' || op === 'endsWith') return `  ${op}?: string;`;
      return `  ${op}?: ${v};`;
    });
    return `/** Operators on ${f.replace('.', ' of ')} columns; several in one condition must all hold. */\nexport interface ${conditionTypeName(f)} {\n${fields.join('\n')}\n}`;
  });
  return blocks.join('\n\n');
}

function updateForms(col: ColumnModel): string {
  const forms = [columnType(col, true)];
  if (isNumeric(col)) forms.push('{ increment: number }', '{ decrement: number }');
  if (col.spec.kind === 'list') {
    const item = SCALAR[col.spec.of ?? 'text'];
    forms.push(`{ add: ${item} }`, `{ remove: ${item} }`);
  }
  return forms.join(' | ');
}

function iface(name: string, doc: string, fields: string[]): string {
  return `/** ${doc} */\nexport interface ${name} {\n${fields.map((f) => `  ${f}`).join('\n')}\n}`;
}

/** All declarations of one collection; `T` is its type-name stem. */
export function collectionTypes(c: CollectionModel, T: string): string {
  const what = c.kind === 'view' ? `view \`${c.name}\` (read-only)` : `table \`${c.name}\``;
  const out: string[] = [];
  out.push(
    iface(
      `${T}Row`,
      `A row of the ${what}.`,
      c.columnList.filter(isVisible).map((col) => `${col.name}: ${columnType(col, false)};`),
    ),
  );
  const whereFields = c.columnList
    .filter((col) => !COMBINATORS.has(col.name))
    .flatMap((col) => {
      const f = conditionFamily(col);
      return f ? [`${col.name}?: ${conditionTypeName(f)};`] : [];
    });
  whereFields.push(`and?: ${T}Where[];`, `or?: ${T}Where[];`, `not?: ${T}Where;`);
  out.push(iface(`${T}Where`, `A filter on the ${what}; \`{}\` means every row.`, whereFields));
  out.push(iface(`${T}OrderBy`, `A sort term for the ${what}.`, [`column: ${union(c.columnList.filter(isSortable).map((col) => col.name))};`, `direction?: 'asc' | 'desc';`]));
  const shape = [`row: ${T}Row;`, `where: ${T}Where;`, `orderBy: ${T}OrderBy;`];
  if (c.kind === 'table') {
    const create = c.columnList.filter(isCreatable).map((col) => `${col.name}${isRequiredOnCreate(col) ? '' : '?'}: ${columnType(col, true)};`);
    out.push(iface(`${T}Create`, `The \`object\` of a create on the ${what}.`, create));
    const updates = c.columnList.filter(isUpdatable).map((col) => `  | { column: ${lit(col.name)}; value: ${updateForms(col)} }`);
    out.push(`/** One entry of an update on the ${what}. */\nexport type ${T}Update =\n${updates.length ? updates.join('\n') : '  never'};`);
    shape.push(`create: ${T}Create;`, `update: ${T}Update;`, `custom: ${union(Object.keys(c.rules?.custom ?? {}))};`);
  }
  out.push(iface(`${T}Shape`, `Everything the client's methods for \`${c.name}\` are typed by.`, shape));
  return out.join('\n\n');
}

/** The `object` of sign-up: only the table's signUpFields. */
export function signUpType(c: CollectionModel, T: string): string {
  const fields = (c.auth?.signUpFields ?? []).map((f) => {
    const col = c.columns.get(f)!;
    return `${f}${isRequiredOnCreate(col) ? '' : '?'}: ${columnType(col, true)};`;
  });
  return iface(`${T}SignUp`, `Extra fields sign-up accepts for \`${c.name}\`.`, fields);
}
