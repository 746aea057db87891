/** The hooks' `ctx.email`: verification and reset emails carry a fresh single-use token (docs/reference/auth.md). */
import type { AuthServices } from '../auth/index.js';
import type { EmailService } from '../email/index.js';
import type { EmailSender } from '../core/runtime.js';

export function emailSender(email: EmailService, auth: AuthServices): EmailSender {
  return {
    send: (message) => email.send(message),
    sendVerification: async (user, table) => {
      const { token } = await auth.confirmTokens.issue('verify', { table, userId: user.id, email: user.email });
      await email.sendVerification(user.email, token);
    },
    sendPasswordReset: async (user, table) => {
      const { token } = await auth.confirmTokens.issue('reset', { table, userId: user.id, email: user.email });
      await email.sendPasswordReset(user.email, token);
    },
  };
}
