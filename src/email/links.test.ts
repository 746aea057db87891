import { describe, it, expect } from 'vitest';
import { buildLink, resolveLinkTemplates, validateLinkTemplate, DEFAULT_RESET_LINK, DEFAULT_VERIFY_LINK } from './links.js';

describe('links', () => {
  it('fills {token} with the URL-encoded token', () => {
    expect(buildLink(DEFAULT_VERIFY_LINK, 'abc123')).toBe('http://localhost/verify?token=abc123');
    expect(buildLink('https://app.example/reset?t={token}&x=1', 'a+b/c=?&d e')).toBe('https://app.example/reset?t=a%2Bb%2Fc%3D%3F%26d%20e&x=1');
  });

  it('replaces every occurrence', () => {
    expect(buildLink('app://v/{token}?again={token}', 'x/y')).toBe('app://v/x%2Fy?again=x%2Fy');
  });

  it('defaults to the docs/reference/conformance.md links', () => {
    expect(resolveLinkTemplates()).toEqual({
      verify: 'http://localhost/verify?token={token}',
      reset: 'http://localhost/reset?token={token}',
      magicLink: 'http://localhost/magic?token={token}',
      changeEmail: 'http://localhost/change-email?token={token}',
    });
    expect(DEFAULT_RESET_LINK).toBe('http://localhost/reset?token={token}');
    expect(resolveLinkTemplates({ reset: ' https://x.example/r/{token} ' })).toMatchObject({ verify: DEFAULT_VERIFY_LINK, reset: 'https://x.example/r/{token}' });
  });

  it('rejects templates without {token}, empty ones and ones with whitespace inside', () => {
    expect(() => validateLinkTemplate('http://localhost/verify', 'email.links.verify')).toThrow(/must contain \{token\}/);
    expect(() => validateLinkTemplate('', 'email.links.verify')).toThrow(/non-empty/);
    expect(() => validateLinkTemplate(42, 'email.links.verify')).toThrow(/non-empty/);
    expect(() => validateLinkTemplate('http://x/{token}\nEvil: 1', 'email.links.verify')).toThrow(/whitespace/);
    expect(() => resolveLinkTemplates({ verify: 'nope' })).toThrow(/email\.links\.verify/);
  });
});
