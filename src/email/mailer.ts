/**
 * The one small interface every email transport implements (ARCHITECTURE "small interfaces for
 * swappable parts"). docs/reference/dashboard.md: SMTP when `SMTP_URL` is set, otherwise the `<data>/outbox/` folder.
 * Messages reaching a Mailer are already validated and rendered by the service in `index.ts`.
 */

export interface OutgoingEmail {
  /** Validated, lowercased addresses; at least one. */
  to: string[];
  from: string;
  subject: string;
  text?: string;
  html?: string;
}

export interface Mailer {
  /** Delivers (or stores) one message and answers its id. */
  send(msg: OutgoingEmail): Promise<{ id: string }>;
  /** Waits for messages in flight, then releases connections or handles. */
  close(): Promise<void>;
}

/**
 * A transport failure with only safe, credential-free facts kept. Transport errors can carry
 * socket details or server responses; we copy the few fields worth logging and drop the rest.
 */
export class EmailDeliveryError extends Error {
  readonly code: string | undefined;
  readonly responseCode: number | undefined;

  constructor(message: string, facts: { code?: string; responseCode?: number } = {}) {
    super(message);
    this.name = 'EmailDeliveryError';
    this.code = facts.code;
    this.responseCode = facts.responseCode;
  }
}
