/**
 * Verification and reset links (docs/reference/auth.md, docs/reference/conformance.md): the project configures a link template such as
 * `http://localhost/verify?token={token}`, and every `{token}` is replaced by the URL-encoded
 * token. Templates are checked once at start-up so a typo fails loudly instead of mailing users
 * a link without a token.
 */

export const DEFAULT_VERIFY_LINK = 'http://localhost/verify?token={token}';
export const DEFAULT_RESET_LINK = 'http://localhost/reset?token={token}';
export const DEFAULT_MAGIC_LINK = 'http://localhost/magic?token={token}';
export const DEFAULT_CHANGE_EMAIL_LINK = 'http://localhost/change-email?token={token}';

/**
 * The defaults of a server that knows its public URL (every real server; unit tests of the email
 * service alone keep the ones above): paths, built on that URL, to the confirmation page the
 * dashboard bundle serves at `/_/confirm/…` — so a link in a development email opens and works.
 */
export const CONFIRM_PAGE_LINKS: LinkTemplates = Object.freeze({
  verify: '/_/confirm/verify?token={token}',
  reset: '/_/confirm/reset?token={token}',
  magicLink: '/_/confirm/magic?token={token}',
  changeEmail: '/_/confirm/change-email?token={token}',
});

const TOKEN = '{token}';

export interface LinkTemplates {
  verify: string;
  reset: string;
  magicLink: string;
  changeEmail: string;
}

/** Throws (naming the setting, not a secret) unless the template is usable. */
export function validateLinkTemplate(template: unknown, setting: string): string {
  if (typeof template !== 'string' || template.trim() === '') throw new Error(`${setting} must be a non-empty string`);
  if (!template.includes(TOKEN)) throw new Error(`${setting} must contain ${TOKEN}, e.g. ${DEFAULT_VERIFY_LINK}`);
  // A space or newline inside a link breaks it in plain-text mail clients.
  const trimmed = template.trim();
  if (/\s/.test(trimmed)) throw new Error(`${setting} must not contain whitespace`);
  return trimmed;
}

/** Fills `{token}` (every occurrence) with the URL-encoded token. */
export function buildLink(template: string, token: string): string {
  return template.split(TOKEN).join(encodeURIComponent(token));
}

const FIXED_DEFAULTS: LinkTemplates = { verify: DEFAULT_VERIFY_LINK, reset: DEFAULT_RESET_LINK, magicLink: DEFAULT_MAGIC_LINK, changeEmail: DEFAULT_CHANGE_EMAIL_LINK };

/** The project's link templates with the defaults filled in, validated. */
export function resolveLinkTemplates(links: Partial<LinkTemplates> = {}, defaults: LinkTemplates = FIXED_DEFAULTS): LinkTemplates {
  return {
    verify: validateLinkTemplate(links.verify ?? defaults.verify, 'email.links.verify'),
    reset: validateLinkTemplate(links.reset ?? defaults.reset, 'email.links.reset'),
    magicLink: validateLinkTemplate(links.magicLink ?? defaults.magicLink, 'email.links.magicLink'),
    changeEmail: validateLinkTemplate(links.changeEmail ?? defaults.changeEmail, 'email.links.changeEmail'),
  };
}

/** A template given as a path (`/verify?token={token}`) built on the public URL; a full URL as it is. */
export function absoluteLink(template: string, publicUrl: string | undefined): string {
  return template.startsWith('/') && !template.startsWith('//') && publicUrl ? `${publicUrl.replace(/\/+$/, '')}${template}` : template;
}
