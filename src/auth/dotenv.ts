/**
 * A small, safe `.env` parser (docs/reference/configuration.md: "a `.env` file in the project folder is read too").
 *
 * Accepted: `KEY=VALUE` lines, an optional `export ` prefix, `#` comment lines, unquoted values
 * (trimmed; ` #` starts a trailing comment), single-quoted values (literal) and double-quoted
 * values (`\n`, `\r`, `\t`, `\"`, `\\` escapes; may span lines). Lines that do not look like an
 * assignment are ignored, as the `dotenv` package does. Nothing is ever evaluated or expanded
 * (no `$VAR` interpolation, no command substitution), and the result has no prototype, so a key
 * named `__proto__` is just a key.
 */

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

function unescapeDouble(raw: string): string {
  return raw.replace(/\\(.)/gs, (all, c: string) => ESCAPES[c] ?? all);
}

/** Index of the closing `quote` at or after `from`, skipping backslash escapes in double quotes. */
function closingQuote(text: string, from: number, quote: string): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote === '"' && c === '\\') {
      i++;
      continue;
    }
    if (c === quote) return i;
  }
  return -1;
}

export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  let pos = 0;
  // A UTF-8 byte-order mark would otherwise become part of the first key.
  if (text.charCodeAt(0) === 0xfeff) pos = 1;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const line = text.slice(pos, end);
    let next = end + 1;
    const eq = line.indexOf('=');
    const trimmed = line.trim();
    if (eq !== -1 && !trimmed.startsWith('#')) {
      let key = line.slice(0, eq).trim();
      if (key.startsWith('export ')) key = key.slice(7).trim();
      if (KEY.test(key)) {
        const rest = line.slice(eq + 1).replace(/^[ \t]+/, '');
        const quote = rest[0];
        let value: string;
        if (quote === '"' || quote === "'") {
          // The value starts right after the quote; it may continue over several lines.
          const start = pos + eq + 1 + (line.slice(eq + 1).length - rest.length) + 1;
          const close = closingQuote(text, start, quote);
          if (close === -1) {
            value = rest.replace(/\r$/, '').trim(); // unterminated: keep the line as written
          } else {
            const raw = text.slice(start, close);
            value = quote === '"' ? unescapeDouble(raw.replace(/\r\n/g, '\n')) : raw.replace(/\r\n/g, '\n');
            const lineEnd = text.indexOf('\n', close);
            next = lineEnd === -1 ? text.length : lineEnd + 1;
          }
        } else {
          const hash = rest.search(/[ \t]#/);
          value = (hash === -1 ? rest : rest.slice(0, hash)).trim();
        }
        out[key] = value;
      }
    }
    pos = next;
  }
  return out;
}
