/**
 * Storage owns every database difference (issue #20): outside `src/storage/` no code asks which
 * database it is (`dialect.name`, a comparison with 'sqlite'/'postgres') and no string or template
 * literal holds SQL. Feature services call the repositories in `src/storage/repos/` with values;
 * new SQL is written there with the builder (`src/storage/sql.ts`).
 *
 * Run by `npm test` (`node --import tsx scripts/check-storage-boundary.ts`), and over the tree by
 * `scripts/check-storage-boundary.test.ts`. Tests and test fixtures are exempt: they may inspect
 * the database directly. It parses each file with TypeScript, so comments never count.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Statement shapes, upper-case as this codebase writes SQL; prose in messages is lower-case. */
const SQL_PATTERNS: readonly RegExp[] = [
  /\bSELECT\b[\s\S]*\bFROM\b/,
  /\bINSERT\s+INTO\b/,
  /\bUPDATE\b[\s\S]*\bSET\b/,
  /\bDELETE\s+FROM\b/,
  /\b(CREATE|DROP|ALTER)\s+(TEMP\s+|UNIQUE\s+)?(TABLE|INDEX|TRIGGER|VIEW)\b/,
  /\bON\s+CONFLICT\b/,
  /\bSKIP\s+LOCKED\b/,
  /\bPRAGMA\s+\w/,
  /\bRETURNING\b/,
];

const DIALECT_NAMES = new Set(['sqlite', 'postgres']);
const EXEMPT = /(\.test\.ts|[/\\]test-support\.ts|[/\\]test-fixtures\.ts|[/\\]store-conformance\.ts)$/;

export interface Violation {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

/** The literal text of a string or template literal (a template's substitutions as `?`). */
function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((s) => `?${s.literal.text}`).join('');
  return undefined;
}

const isDialectName = (n: ts.Expression): boolean => (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && DIALECT_NAMES.has(n.text);

/** Violations in one file's source text. */
export function violationsIn(file: string, source: string): Violation[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out: Violation[] = [];
  const add = (node: ts.Node, what: string) => out.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, what });
  const visit = (node: ts.Node): void => {
    const text = literalText(node);
    if (text !== undefined) {
      const hit = SQL_PATTERNS.find((re) => re.test(text));
      if (hit) add(node, `SQL text in a literal (${hit.source}); move it to a repository in src/storage/repos/`);
      if (!ts.isTemplateExpression(node)) return;
    }
    // `x.dialect.name`, `dialect.name`
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'name') {
      const target = node.expression;
      const holder = ts.isPropertyAccessExpression(target) ? target.name.text : ts.isIdentifier(target) ? target.text : '';
      if (holder === 'dialect') add(node, 'dialect.name outside src/storage/; ask a Dialect capability instead');
    }
    // `… === 'postgres'`, `case 'sqlite':`
    if (
      ts.isBinaryExpression(node) &&
      [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken].includes(node.operatorToken.kind)
    ) {
      if (isDialectName(node.left) || isDialectName(node.right)) add(node, 'a comparison with a database name outside src/storage/; ask a Dialect capability instead');
    }
    if (ts.isCaseClause(node) && isDialectName(node.expression)) add(node, 'a case on a database name outside src/storage/; ask a Dialect capability instead');
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Every violation under `root/src`, outside `src/storage/`, tests and fixtures exempt. */
export function checkTree(root: string): Violation[] {
  const src = join(root, 'src');
  const storage = join(src, 'storage') + sep;
  const ui = join(src, 'dashboard', 'ui') + sep;
  return filesUnder(src)
    .filter((f) => !f.startsWith(storage) && !f.startsWith(ui) && !EXEMPT.test(f))
    .flatMap((f) => violationsIn(relative(root, f), readFileSync(f, 'utf8')));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const found = checkTree(join(fileURLToPath(import.meta.url), '..', '..'));
  for (const v of found) console.error(`${v.file}:${v.line}: ${v.what}`);
  if (found.length > 0) {
    console.error(`storage boundary: ${found.length} violation(s)`);
    process.exit(1);
  }
  console.log('storage boundary: no SQL and no database-name checks outside src/storage/');
}
