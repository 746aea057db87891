/**
 * Reading an S3 failure without the AWS SDK loaded (client.ts loads it): photo storage and the
 * health answer classify errors, and a server without a bucket never pays for the SDK at start.
 */

/**
 * True when the error means the service could not be reached or failed on its side (network
 * errors, timeouts, 5xx): callers answer 503 and try again later, rather than 500.
 */
export function isUnavailable(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500;
  return /^(TimeoutError|RequestTimeout|AbortError|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(e.code ?? e.name ?? '');
}

/** A one-line description of an S3 failure for logs and startup errors (the SDK never puts secrets in these). */
export function describeS3Error(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } } | null;
  const status = e?.$metadata?.httpStatusCode;
  const what = e?.code ?? e?.name ?? 'Error';
  const message = e?.message && e.message !== what ? `: ${e.message}` : '';
  return `${what}${status ? ` (HTTP ${status})` : ''}${message}`;
}
