/**
 * `{{variable}}` substitution for email templates (docs/reference/dashboard.md). One pass over the source, so a
 * value that itself contains `{{…}}` is never expanded again. Values are HTML-escaped in the
 * html part and inserted raw in text and subject; an unknown variable renders as the empty
 * string. `{{user.name}}` walks nested objects through own properties only, so a template can
 * never reach `__proto__`, `constructor` and the like.
 */

export interface EmailTemplate {
  subject?: string;
  text?: string;
  html?: string;
}

export type RenderedEmail = EmailTemplate;

export type TemplateVariables = Readonly<Record<string, unknown>>;

const PLACEHOLDER = /\{\{\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*\}\}/g;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

function lookup(variables: TemplateVariables, path: string): unknown {
  let current: unknown = variables;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function format(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString();
  if (typeof value === 'object') {
    try {
      return JSON.stringify(value) ?? '';
    } catch {
      return ''; // cyclic or otherwise unserializable: render nothing rather than fail the send
    }
  }
  return ''; // functions and symbols have no sensible text form
}

/** Replaces every `{{name}}` in `source`; `html` escapes the inserted values. */
export function renderString(source: string, variables: TemplateVariables, options: { html: boolean }): string {
  return source.replace(PLACEHOLDER, (_match, path: string) => {
    const text = format(lookup(variables, path));
    return options.html ? escapeHtml(text) : text;
  });
}

/**
 * A subject is one header line: whitespace runs (a newline from the file's end or from a
 * variable included) collapse to one space, so no value can start a new header.
 */
export function cleanSubject(subject: string): string {
  return subject.replace(/\s+/g, ' ').trim();
}

export function renderTemplate(template: EmailTemplate, variables: TemplateVariables): RenderedEmail {
  const out: RenderedEmail = {};
  if (template.subject !== undefined) out.subject = cleanSubject(renderString(template.subject, variables, { html: false }));
  if (template.text !== undefined) out.text = renderString(template.text, variables, { html: false });
  if (template.html !== undefined) out.html = renderString(template.html, variables, { html: true });
  return out;
}
