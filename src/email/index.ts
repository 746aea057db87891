/**
 * The email service (docs/reference/auth.md, docs/reference/dashboard.md): validates a message, renders its template, and hands
 * it to one Mailer — SMTP when `SMTP_URL` is set, otherwise JSON files in `<data>/outbox/`.
 * `POST /email`, `ctx.email` in hooks and cron, and the auth routes all send through here.
 *
 * @example
 * const email = createEmailService({ smtpUrl: process.env.SMTP_URL, outboxDir: join(data, 'outbox'), log });
 * await email.sendVerification('ann@example.com', token); // link: http://localhost/verify?token=…
 */
import { ApiError } from '../core/errors.js';
import type { EmailMessage, Logger } from '../define/types.js';
import { normalizeEmail } from '../pipeline/plan/values.js';
import { absoluteLink, CONFIRM_PAGE_LINKS, resolveLinkTemplates, buildLink } from './links.js';
import type { Mailer, OutgoingEmail } from './mailer.js';
import { checkMessage, MAX_SUBJECT_LENGTH } from './message.js';
import { OutboxMailer } from './outbox-mailer.js';
import { renderTemplate, type RenderedEmail } from './render.js';
import { SmtpMailer, describeSmtp, parseSmtpUrl } from './smtp-mailer.js';
import { TemplateStore } from './templates.js';

export const DEFAULT_FROM = 'Tablebase <no-reply@localhost>';

export interface EmailServiceOptions {
  /** `SMTP_URL`; empty or absent means the outbox folder. */
  smtpUrl?: string;
  /** `<data>/outbox/`, used when there is no SMTP URL. */
  outboxDir: string;
  /** The sender of every message (default `Tablebase <no-reply@localhost>`). */
  from?: string;
  /** The project's templates folder (already resolved against the project folder). */
  templatesDir?: string;
  /** Link templates containing `{token}` (defaults: `http://localhost/verify?token={token}`, `…/reset?token={token}`). */
  links?: { verify?: string; reset?: string; magicLink?: string; changeEmail?: string };
  /**
   * The server's public origin, asked at each send (it is known once the server listens). Given,
   * the default links lead to the confirmation page at `/_/confirm/…` and templates given as paths
   * are built on it (docs/reference/auth.md).
   */
  publicUrl?: () => string | undefined;
  log: Logger;
  /** Replaces the SMTP/outbox choice (tests, or another provider later). */
  mailer?: Mailer;
}

export interface EmailService {
  /** Which transport was chosen: `smtp`, `outbox`, or `custom` for an injected mailer. */
  readonly transport: 'smtp' | 'outbox' | 'custom';
  /** `{to, subject, text|html}` or `{to, template, variables}`. 400 on bad input, 404 for an unknown template, 503 when delivery fails. */
  send(message: EmailMessage): Promise<{ id: string }>;
  /** Renders `verifyEmail` with `link`, `email`, `token` (plus any `extra` variables) and sends it. */
  sendVerification(to: string, token: string, extra?: Record<string, unknown>): Promise<{ id: string }>;
  /** Renders `resetPassword` with `link`, `email`, `token` (plus any `extra` variables) and sends it. */
  sendPasswordReset(to: string, token: string, extra?: Record<string, unknown>): Promise<{ id: string }>;
  /** Renders `magicLink` with `link`, `email`, `token` and sends it (docs/reference/auth.md). */
  sendMagicLink(to: string, token: string): Promise<{ id: string }>;
  /** Renders `changeEmail` with `link`, `email` (the new address), `token` and sends it (docs/reference/auth.md). */
  sendChangeEmail(to: string, token: string): Promise<{ id: string }>;
  /** Renders `otp` with `code` and `email` and sends it (docs/reference/auth.md). */
  sendOtp(to: string, code: string): Promise<{ id: string }>;
  /** Waits for messages in flight and releases the transport. Idempotent. */
  close(): Promise<void>;
}

export function createEmailService(options: EmailServiceOptions): EmailService {
  const { log } = options;
  const from = checkFrom(options.from ?? DEFAULT_FROM);
  const links = resolveLinkTemplates(options.links, options.publicUrl ? CONFIRM_PAGE_LINKS : undefined);
  const templates = new TemplateStore(options.templatesDir);

  let mailer: Mailer;
  let transport: EmailService['transport'];
  if (options.mailer) {
    mailer = options.mailer;
    transport = 'custom';
  } else if (options.smtpUrl !== undefined && options.smtpUrl.trim() !== '') {
    const settings = parseSmtpUrl(options.smtpUrl.trim());
    mailer = new SmtpMailer(settings, log);
    transport = 'smtp';
    log.info({ email: describeSmtp(settings) }, 'email: sending through SMTP');
  } else {
    mailer = new OutboxMailer(options.outboxDir);
    transport = 'outbox';
    log.info({ email: 'outbox', dir: options.outboxDir }, 'email: no SMTP_URL, writing messages to the outbox folder');
  }

  let closing: Promise<void> | undefined;

  async function deliver(to: string[], rendered: RenderedEmail, what: string): Promise<{ id: string }> {
    const subject = rendered.subject ?? '';
    if (subject === '') throw new ApiError('BAD_REQUEST', 'The email has no subject', { details: [{ path: '/subject', message: 'is required (the template has no .subject file)' }] });
    if (subject.length > MAX_SUBJECT_LENGTH) {
      throw new ApiError('BAD_REQUEST', 'The rendered subject is too long', { details: [{ path: '/subject', message: `must be at most ${MAX_SUBJECT_LENGTH} characters` }] });
    }
    const outgoing: OutgoingEmail = { to, from, subject };
    if (rendered.text !== undefined) outgoing.text = rendered.text;
    if (rendered.html !== undefined) outgoing.html = rendered.html;
    if (closing) throw new ApiError('UNAVAILABLE', 'The email service is shutting down');
    try {
      const result = await mailer.send(outgoing);
      log.debug({ emailId: result.id, what, recipients: to.length }, 'email sent');
      return result;
    } catch (err) {
      // Recipients are personal data and the cause may be a file path: both stay in the log only.
      const e = err as { name?: string; message?: string; code?: unknown };
      log.error({ what, recipients: to.length, err: { name: e?.name, message: e?.message, code: e?.code } }, 'email delivery failed');
      throw new ApiError('UNAVAILABLE', 'The email could not be sent', { cause: err });
    }
  }

  async function sendAuthEmail(template: 'verifyEmail' | 'resetPassword' | 'magicLink' | 'changeEmail', linkTemplate: string, to: string, token: string, extra?: Record<string, unknown>) {
    const email = normalizeEmail(to, '/email');
    if (typeof token !== 'string' || token === '') throw new TypeError(`${template}: token must be a non-empty string`);
    const link = buildLink(absoluteLink(linkTemplate, options.publicUrl?.()), token);
    const source = await templates.load(template);
    return deliver([email], renderTemplate(source, { ...extra, link, email, token }), template);
  }

  return {
    transport,

    async send(message) {
      const checked = checkMessage(message);
      if (checked.kind === 'direct') {
        const { to, subject, text, html } = checked;
        return deliver(to, { subject, ...(text !== undefined ? { text } : {}), ...(html !== undefined ? { html } : {}) }, 'message');
      }
      const rendered = renderTemplate(await templates.load(checked.template), checked.variables);
      if (checked.subject !== undefined) rendered.subject = checked.subject;
      return deliver(checked.to, rendered, checked.template);
    },

    sendVerification: (to, token, extra) => sendAuthEmail('verifyEmail', links.verify, to, token, extra),
    sendPasswordReset: (to, token, extra) => sendAuthEmail('resetPassword', links.reset, to, token, extra),
    sendMagicLink: (to, token) => sendAuthEmail('magicLink', links.magicLink, to, token),
    sendChangeEmail: (to, token) => sendAuthEmail('changeEmail', links.changeEmail, to, token),
    async sendOtp(to, code) {
      const email = normalizeEmail(to, '/email');
      return deliver([email], renderTemplate(await templates.load('otp'), { code, email }), 'otp');
    },

    close() {
      closing ??= mailer.close();
      return closing;
    },
  };
}

/** The sender goes into a header: one line, and it must hold an address. */
function checkFrom(from: string): string {
  const value = from.trim();
  if (value === '' || /[\r\n]/.test(value) || !value.includes('@')) throw new Error('email.from must be an address such as "App <no-reply@example.com>"');
  return value;
}

export type { Mailer, OutgoingEmail } from './mailer.js';
export { EmailDeliveryError } from './mailer.js';
export { OutboxMailer, type OutboxRecord } from './outbox-mailer.js';
export { SmtpMailer, parseSmtpUrl, describeSmtp, type SmtpSettings } from './smtp-mailer.js';
export { TemplateStore, isTemplateName, BUILTIN_TEMPLATES, BUILTIN_TEMPLATE_NAMES } from './templates.js';
export { renderTemplate, renderString, escapeHtml } from './render.js';
export { buildLink, resolveLinkTemplates, DEFAULT_VERIFY_LINK, DEFAULT_RESET_LINK, DEFAULT_MAGIC_LINK, DEFAULT_CHANGE_EMAIL_LINK } from './links.js';
export { checkMessage, MAX_RECIPIENTS, MAX_SUBJECT_LENGTH } from './message.js';
