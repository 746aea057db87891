/** The auth routes' entries in the route table (SPEC §8). */
import type { Route } from '../http/routes.js';
import { confirm, logout, refresh, resetPassword, signIn, signUp, verifyEmail } from './routes.js';

export function authRoutes(): Route[] {
  const r = (path: string, summary: string, handler: Route['handler']): Route => Object.freeze({ method: 'POST' as const, path, group: 'auth' as const, summary, handler });
  return [
    r('/auth/sign-up', 'Create an account and sign in', signUp),
    r('/auth/sign-in', 'Sign in with email and password', signIn),
    r('/auth/verify-email', 'Send (or resend) the verification email', verifyEmail),
    r('/auth/confirm', 'Confirm an email verification or a password reset', confirm),
    r('/auth/reset-password', 'Send a password-reset email', resetPassword),
    r('/auth/refresh', 'Rotate a refresh token for a new token pair', refresh),
    r('/auth/logout', 'End the session of the bearer token', logout),
  ];
}
