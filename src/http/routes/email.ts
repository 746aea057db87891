/**
 * POST /email (docs/reference/dashboard.md): an admin token, or a caller the project's `email.canSend`
 * allows. No token: 401 UNAUTHENTICATED; a token the rule refuses: 403. The schema checks the
 * shape; the email service checks addresses, templates and the text/html/template combinations
 * (it serves hooks and cron too) and answers 400 with details, 404 for an unknown template.
 */
import { Type } from '@sinclair/typebox';
import { MAX_RECIPIENTS, MAX_SUBJECT_LENGTH } from '../../email/message.js';
import { defineRoute } from '../declare.js';

const Address = Type.String({ format: 'email', maxLength: 320 });

export const EmailMessage = Type.Object(
  {
    to: Type.Union([Address, Type.Array(Address, { minItems: 1, maxItems: MAX_RECIPIENTS })], { description: `one address or a list (at most ${MAX_RECIPIENTS})` }),
    subject: Type.Optional(Type.String({ maxLength: MAX_SUBJECT_LENGTH, description: "with a template: replaces the template's own subject" })),
    text: Type.Optional(Type.String()),
    html: Type.Optional(Type.String()),
    template: Type.Optional(Type.String({ description: 'a project template, or the built-in verifyEmail / resetPassword; not with text or html' })),
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'only with template' })),
  },
  { additionalProperties: false, description: '`{to, subject, text|html}`, or `{to, template, variables}`' },
);

export const emailRoutes = [
  defineRoute({
    method: 'POST',
    path: '/email',
    family: 'email',
    summary: 'Send an email (admin, or the project email.canSend rule)',
    description: "An admin token, or a caller the project's email.canSend allows. No token: 401 UNAUTHENTICATED; refused: 403. An unknown template is 404.",
    operationId: 'sendEmail',
    access: 'bearer',
    rule: async (jwt, s) => {
      if (jwt?.admin?.isAdmin === true) return true;
      const canSend = s.rt.model.project.email?.canSend;
      return canSend ? (await canSend(jwt)) === true : false;
    },
    body: EmailMessage,
    responses: { 200: Type.Object({ id: Type.String() }, { additionalProperties: false }) },
    errors: ['NOT_FOUND', 'UNAVAILABLE'],
    examples: { body: { to: 'ann@example.com', subject: 'Hello', text: 'Hi Ann' }, data: { id: 'em_01jf8x7k2m3n4p5q' } },
    handler: ({ body }, s) => s.email.send(body),
  }),
];
