/**
 * `createOAuthService`: the one factory the composition root calls for OAuth / OIDC sign-in
 * (docs/reference/auth.md). Providers come from each auth table's `oauth` option, the allow list and public
 * origin from the project's `auth` settings.
 */
import type { SqlRunner } from '../../storage/driver.js';
import type { Dialect } from '../../storage/dialect.js';
import type { SignInDeps } from '../sign-in.js';
import type { WriteFn } from '../sessions.js';
import { OAuthService } from './flow.js';
import { OAuthIdentities } from './identities.js';
import { OAuthStates } from './states.js';

export { OAuthService, redirectAllowed, type CallbackOutcome, type OAuthSettings } from './flow.js';
export { appleClientSecret, isLoopbackHttp, providerFlow, type Identity } from './providers.js';

export interface OAuthServiceOptions extends SignInDeps {
  readonly dialect: Dialect;
  readonly reader: SqlRunner;
  readonly write: WriteFn;
  readonly now?: () => number;
  readonly newId?: (prefix: string) => string;
}

export function createOAuthService(o: OAuthServiceOptions): OAuthService {
  const settings = o.rt.model.project.auth ?? {};
  for (const entry of settings.redirectAllowList ?? []) {
    if (typeof entry !== 'string' || !/^[a-z][a-z0-9+.-]*:/i.test(entry)) throw new Error(`auth.redirectAllowList: ${JSON.stringify(entry)} is not an absolute URL`);
  }
  return new OAuthService(o, { redirectAllowList: Object.freeze([...(settings.redirectAllowList ?? [])]), publicUrl: settings.publicUrl }, new OAuthStates(o), new OAuthIdentities(o));
}
