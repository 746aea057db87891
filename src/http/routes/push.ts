/**
 * The device routes of docs/reference/push.md. Registering, listing and removing need a bearer token and are
 * rate limited per IP as `_push_devices` × `push:register` / `push:list` / `push:unregister`;
 * the VAPID public key is public. The schemas check shapes; the push service checks that the
 * platform is configured (400 otherwise) and the token formats.
 */
import { Type } from '@sinclair/typebox';
import { PUSH_TABLE } from '../../ratelimit/policy.js';
import { defineRoute, noContent } from '../declare.js';

const b64url = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+=*$' });

/** A browser's `PushSubscription.toJSON()` (extra fields such as `expirationTime` are ignored). */
const Subscription = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: 2048, description: 'the push service URL (https)' }),
  keys: Type.Object({ p256dh: b64url(256), auth: b64url(64) }),
});

export const RegisterDevice = Type.Union(
  [
    Type.Object({ platform: Type.Literal('web'), subscription: Subscription }, { additionalProperties: false }),
    Type.Object(
      { platform: Type.Union([Type.Literal('fcm'), Type.Literal('apns')]), token: Type.String({ minLength: 1, maxLength: 4096, description: 'FCM registration token or APNs device token (hex)' }) },
      { additionalProperties: false },
    ),
  ],
  { description: 'A Web Push subscription, or an FCM / APNs token. Registering a known token again moves it to the caller.' },
);

export const Device = Type.Object(
  {
    id: Type.String({ pattern: '^pd_', example: 'pd_01jf8x7k2m3n4p5q' }),
    platform: Type.Union([Type.Literal('web'), Type.Literal('fcm'), Type.Literal('apns')]),
    userId: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

const count = Type.Integer({ minimum: 0 });
const Failure = Type.Object({ at: Type.String({ format: 'date-time' }), platform: Type.String(), deviceId: Type.String(), reason: Type.String() }, { additionalProperties: false });

const limit = (op: 'register' | 'list' | 'unregister') => ({ table: PUSH_TABLE, op: `push:${op}` });

export const pushRoutes = [
  defineRoute({
    method: 'POST',
    path: '/push/devices',
    family: 'push',
    summary: 'Register a device for push notifications',
    description: 'A platform the server has not configured is 400. The same token registered again is updated and moves to the caller.',
    operationId: 'registerPushDevice',
    access: 'bearer',
    rateLimit: limit('register'),
    body: RegisterDevice,
    responses: { 200: Device },
    examples: { body: { platform: 'fcm', token: 'fcm-registration-token' } },
    handler: ({ body, jwt }, s) => s.push.register(jwt, body),
  }),
  defineRoute({
    method: 'GET',
    path: '/push/devices',
    family: 'push',
    summary: "List the caller's push devices",
    operationId: 'listPushDevices',
    access: 'bearer',
    rateLimit: limit('list'),
    responses: { 200: Type.Array(Device) },
    handler: ({ jwt }, s) => s.push.list(jwt),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/push/devices',
    family: 'push',
    summary: "Remove one of the caller's push devices",
    description: "Another user's device is 404, like an unknown one.",
    operationId: 'deletePushDevice',
    access: 'bearer',
    rateLimit: limit('unregister'),
    body: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
    responses: { 204: 'Removed' },
    errors: ['NOT_FOUND'],
    handler: async ({ body, jwt }, s) => {
      await s.push.unregister(jwt, body.id);
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/push/vapid-public-key',
    family: 'push',
    summary: 'The VAPID public key browsers subscribe with (RFC 8292)',
    description: '404 when Web Push is not configured.',
    operationId: 'vapidPublicKey',
    access: 'public',
    responses: { 200: Type.Object({ publicKey: Type.String() }, { additionalProperties: false }) },
    errors: ['NOT_FOUND'],
    handler: (_input, s) => ({ publicKey: s.push.vapidPublicKey() }),
  }),
  defineRoute({
    method: 'GET',
    path: '/dashboard/push',
    family: 'dashboard',
    summary: 'Push delivery counts and the last failures (admin)',
    description: 'Counts since this node started; `pending` is the whole queue. The last 50 failures, newest first.',
    operationId: 'dashboardPush',
    serverWide: true, // the push sender runs in the primary
    access: 'admin',
    responses: {
      200: Type.Object({ sent: count, failed: count, retried: count, removedDevices: count, pending: count, failures: Type.Array(Failure) }, { additionalProperties: false }),
    },
    handler: async (_input, s) => ({ ...(await s.push.metrics()), failures: s.push.failures() }),
  }),
];
