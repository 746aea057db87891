/**
 * Checks an email request (docs/reference/dashboard.md `POST /email`, and `ctx.email.send` from hooks and cron)
 * before anything is rendered or sent. Two shapes: `{to, subject, text|html}` or
 * `{to, template, variables}` (a `subject` given with a template replaces the template's own).
 * Every problem is collected into one 400 with `{path, message}` details (docs/reference/conventions.md). There is no
 * `from` field: the sender is the project's setting, so a caller cannot spoof it.
 */
import { ApiError, type ErrorDetail } from '../core/errors.js';
import { normalizeEmail } from '../pipeline/plan/values.js';
import { isTemplateName } from './templates.js';
import { cleanSubject } from './render.js';

export const MAX_RECIPIENTS = 50;
/** RFC 5322 §2.1.1: a header line is at most 998 characters. */
export const MAX_SUBJECT_LENGTH = 998;
/** Per body part; the HTTP body limit is smaller, this bounds what hooks and cron can queue. */
export const MAX_BODY_LENGTH = 1024 * 1024;

export type CheckedMessage =
  { kind: 'direct'; to: string[]; subject: string; text?: string; html?: string } | { kind: 'template'; to: string[]; template: string; variables: Record<string, unknown>; subject?: string };

const KNOWN = new Set(['to', 'subject', 'text', 'html', 'template', 'variables']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** RFC 6901 escaping for a key used in a detail path. */
const pointer = (key: string): string => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** Trimmed, lowercased, de-duplicated recipients (docs/reference/auth.md); problems go to `details`. */
export function checkRecipients(to: unknown, details: ErrorDetail[]): string[] {
  const list = typeof to === 'string' ? [to] : to;
  if (!Array.isArray(list)) {
    details.push({ path: '/to', message: 'must be an email address or a list of them' });
    return [];
  }
  if (list.length === 0) details.push({ path: '/to', message: 'must name at least one recipient' });
  if (list.length > MAX_RECIPIENTS) {
    details.push({ path: '/to', message: `must name at most ${MAX_RECIPIENTS} recipients` });
    return [];
  }
  const out = new Set<string>();
  list.forEach((entry, i) => {
    const path = typeof to === 'string' ? '/to' : `/to/${i}`;
    try {
      out.add(normalizeEmail(entry, path));
    } catch (err) {
      if (!(err instanceof ApiError) || !err.details) throw err;
      details.push(...err.details);
    }
  });
  return [...out];
}

export function checkSubject(subject: unknown, details: ErrorDetail[]): string | undefined {
  if (typeof subject !== 'string') {
    details.push({ path: '/subject', message: 'must be a string' });
    return undefined;
  }
  const clean = cleanSubject(subject);
  if (clean === '') details.push({ path: '/subject', message: 'must not be empty' });
  else if (clean.length > MAX_SUBJECT_LENGTH) details.push({ path: '/subject', message: `must be at most ${MAX_SUBJECT_LENGTH} characters` });
  return clean;
}

function checkBody(message: Record<string, unknown>, key: 'text' | 'html', details: ErrorDetail[]): string | undefined {
  const value = message[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') details.push({ path: `/${key}`, message: 'must be a string' });
  else if (value.length > MAX_BODY_LENGTH) details.push({ path: `/${key}`, message: `must be at most ${MAX_BODY_LENGTH} characters` });
  else return value;
  return undefined;
}

/** Validates one message; throws `ApiError('BAD_REQUEST')` listing every problem. */
export function checkMessage(input: unknown): CheckedMessage {
  if (!isPlainObject(input)) throw new ApiError('BAD_REQUEST', 'The email message must be an object', { details: [{ path: '', message: 'must be an object' }] });
  const details: ErrorDetail[] = [];
  for (const key of Object.keys(input)) if (!KNOWN.has(key)) details.push({ path: pointer(key), message: 'is not a known field' });
  const to = checkRecipients(input.to, details);
  let result: CheckedMessage | undefined;

  if (input.template !== undefined) {
    if (!isTemplateName(input.template)) details.push({ path: '/template', message: 'must be a template name of letters, digits, "-" and "_"' });
    for (const key of ['text', 'html'] as const) {
      if (input[key] !== undefined) details.push({ path: `/${key}`, message: 'cannot be combined with template' });
    }
    if (input.variables !== undefined && !isPlainObject(input.variables)) details.push({ path: '/variables', message: 'must be an object' });
    const subject = input.subject === undefined ? undefined : checkSubject(input.subject, details);
    result = {
      kind: 'template',
      to,
      template: typeof input.template === 'string' ? input.template : '', // a bad one is already in `details`
      variables: isPlainObject(input.variables) ? input.variables : {},
      ...(subject !== undefined ? { subject } : {}),
    };
  } else {
    if (input.variables !== undefined) details.push({ path: '/variables', message: 'is only allowed with template' });
    const subject = checkSubject(input.subject, details);
    const text = checkBody(input, 'text', details);
    const html = checkBody(input, 'html', details);
    if (input.text === undefined && input.html === undefined) details.push({ path: '/text', message: 'text or html is required' });
    else if (!text && !html && !details.some((d) => d.path === '/text' || d.path === '/html')) {
      details.push({ path: '/text', message: 'text or html must not be empty' });
    }
    result = {
      kind: 'direct',
      to,
      subject: subject ?? '',
      ...(text !== undefined ? { text } : {}),
      ...(html !== undefined ? { html } : {}),
    };
  }

  if (details.length > 0) throw new ApiError('BAD_REQUEST', 'The email message is invalid', { details });
  return result;
}
