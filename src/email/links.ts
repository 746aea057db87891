/**
 * Verification and reset links (SPEC §8, §12): the project configures a link template such as
 * `http://localhost/verify?token={token}`, and every `{token}` is replaced by the URL-encoded
 * token. Templates are checked once at start-up so a typo fails loudly instead of mailing users
 * a link without a token.
 */

export const DEFAULT_VERIFY_LINK = 'http://localhost/verify?token={token}';
export const DEFAULT_RESET_LINK = 'http://localhost/reset?token={token}';
export const DEFAULT_MAGIC_LINK = 'http://localhost/magic?token={token}';
export const DEFAULT_CHANGE_EMAIL_LINK = 'http://localhost/change-email?token={token}';

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

/** The project's link templates with the SPEC defaults filled in, validated. */
export function resolveLinkTemplates(links: Partial<LinkTemplates> = {}): LinkTemplates {
  return {
    verify: validateLinkTemplate(links.verify ?? DEFAULT_VERIFY_LINK, 'email.links.verify'),
    reset: validateLinkTemplate(links.reset ?? DEFAULT_RESET_LINK, 'email.links.reset'),
    magicLink: validateLinkTemplate(links.magicLink ?? DEFAULT_MAGIC_LINK, 'email.links.magicLink'),
    changeEmail: validateLinkTemplate(links.changeEmail ?? DEFAULT_CHANGE_EMAIL_LINK, 'email.links.changeEmail'),
  };
}
