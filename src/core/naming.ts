/** camelCase JSON names ⇄ snake_case SQL names (docs/reference/conventions.md). The mapping is reversible for the names we accept. */

const CAMEL = /^[a-z][a-zA-Z0-9]*$/;
const TABLE = /^_?[a-z][a-z0-9_]{0,62}$/;

export function toSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

export function isCamelName(name: string): boolean {
  return CAMEL.test(name);
}

export function isTableName(name: string): boolean {
  return TABLE.test(name);
}
