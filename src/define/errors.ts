/**
 * Errors that project code (hooks, handlers, cron) throws on purpose. Their message reaches the
 * client; any other thrown error is answered with a generic message (docs/reference/conventions.md).
 */
export class UserError extends Error {
  readonly userFacing = true;
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}

/** Thrown by a custom-operation handler when no row matches: 404 NOT_FOUND. */
export class NotFoundError extends Error {
  readonly userFacing = true;
  constructor(message = 'No matching row') {
    super(message);
    this.name = 'NotFoundError';
  }
}
