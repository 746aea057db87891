/**
 * The built-in `verifyEmail` and `resetPassword` templates (docs/reference/auth.md, docs/reference/dashboard.md). Plain and
 * self-contained: inline styles only, no images, fonts or other external assets, so they render
 * the same offline and in clients that block remote content. Variables: `link`, `email`, `token`;
 * `otp` has `code` and `email` instead (docs/reference/auth.md), `changeEmail` goes to the new address.
 * A project overrides either by shipping files of the same name in its templates folder.
 */
import type { EmailTemplate } from './render.js';

export const BUILTIN_TEMPLATE_NAMES = ['verifyEmail', 'resetPassword', 'otp', 'magicLink', 'changeEmail'] as const;
export type BuiltinTemplateName = (typeof BUILTIN_TEMPLATE_NAMES)[number];

function page(title: string, intro: string, button: string | null, outro: string): string {
  const action =
    button === null
      ? `<p style="margin:0 0 24px;font-size:32px;letter-spacing:6px;font-weight:600;font-family:ui-monospace,Menlo,Consolas,monospace;">{{code}}</p>`
      : `<p style="margin:0 0 24px;"><a href="{{link}}" style="display:inline-block;padding:12px 20px;background:#2563eb;color:#ffffff;text-decoration:none;border-radius:6px;">${button}</a></p>
<p style="margin:0 0 8px;font-size:13px;line-height:1.5;color:#52525b;">If the button does not work, copy this address into your browser:</p>
<p style="margin:0 0 24px;font-size:13px;word-break:break-all;"><a href="{{link}}" style="color:#2563eb;">{{link}}</a></p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
</head>
<body style="margin:0;padding:24px;background:#f4f4f5;color:#18181b;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;">
<div style="max-width:480px;margin:0 auto;padding:32px;background:#ffffff;border-radius:8px;">
<h1 style="margin:0 0 16px;font-size:20px;">${title}</h1>
<p style="margin:0 0 24px;line-height:1.5;">${intro}</p>
${action}
<p style="margin:0;font-size:13px;line-height:1.5;color:#52525b;">${outro}</p>
</div>
</body>
</html>
`;
}

export const BUILTIN_TEMPLATES: Readonly<Record<BuiltinTemplateName, Readonly<Required<EmailTemplate>>>> = Object.freeze({
  verifyEmail: Object.freeze({
    subject: 'Verify your email address',
    text: `Hello,

Please confirm that {{email}} is your email address by opening this link:

{{link}}

If you did not create an account, you can ignore this email.
`,
    html: page('Verify your email address', 'Please confirm that {{email}} is your email address.', 'Verify email address', 'If you did not create an account, you can ignore this email.'),
  }),
  resetPassword: Object.freeze({
    subject: 'Reset your password',
    text: `Hello,

Someone asked to reset the password of the account {{email}}. To choose a new password, open this link:

{{link}}

The link works once and expires soon. If you did not ask for this, you can ignore this email; your password stays the same.
`,
    html: page(
      'Reset your password',
      'Someone asked to reset the password of the account {{email}}. The link below works once and expires soon.',
      'Choose a new password',
      'If you did not ask for this, you can ignore this email; your password stays the same.',
    ),
  }),
  otp: Object.freeze({
    subject: 'Your sign-in code',
    text: `Hello,

Your sign-in code for {{email}} is:

{{code}}

It works once and expires in 10 minutes. If you did not ask for it, you can ignore this email.
`,
    html: page('Your sign-in code', 'Enter this code to sign in as {{email}}. It works once and expires in 10 minutes.', null, 'If you did not ask for it, you can ignore this email.'),
  }),
  magicLink: Object.freeze({
    subject: 'Your sign-in link',
    text: `Hello,

To sign in as {{email}}, open this link:

{{link}}

It works once and expires in 15 minutes. If you did not ask for it, you can ignore this email.
`,
    html: page('Sign in', 'Open the link below to sign in as {{email}}. It works once and expires in 15 minutes.', 'Sign in', 'If you did not ask for it, you can ignore this email.'),
  }),
  changeEmail: Object.freeze({
    subject: 'Confirm your new email address',
    text: `Hello,

Someone asked to make {{email}} the email address of their account. To confirm, open this link:

{{link}}

It works once and expires in 1 hour. If you did not ask for this, you can ignore this email; nothing changes.
`,
    html: page(
      'Confirm your new email address',
      'Someone asked to make {{email}} the email address of their account. The link below works once and expires in 1 hour.',
      'Confirm the new address',
      'If you did not ask for this, you can ignore this email; nothing changes.',
    ),
  }),
});

export function isBuiltinTemplateName(name: string): name is BuiltinTemplateName {
  return (BUILTIN_TEMPLATE_NAMES as readonly string[]).includes(name);
}
