/**
 * The messages of `/db/live` as schemas, for the OpenAPI document (docs/reference/live.md). The
 * server reads them in pipeline/live-session.ts; keep the two in step.
 */
import { Type } from '@sinclair/typebox';

const Id = Type.String({ minLength: 1, maxLength: 64, description: 'Chosen by the client, unique among its open subscriptions on this connection' });
const ErrorBody = Type.Object({
  code: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
});

export const ClientMessage = Type.Union(
  [
    Type.Object(
      { type: Type.Literal('auth'), token: Type.String({ minLength: 1, maxLength: 8192, description: 'An access token; replaces the current one and re-authorizes every open subscription' }) },
      { title: 'Auth' },
    ),
    Type.Object(
      {
        type: Type.Literal('subscribe'),
        id: Id,
        route: Type.Union([Type.Literal('get'), Type.Literal('list'), Type.Literal('count')], { description: 'get = /db/stream, list = /db/stream/list, count = /db/stream/count' }),
        body: Type.Object(
          {},
          { additionalProperties: true, description: 'The body of that stream route (GetBody, ListBody or CountBody): `table`, `where`, and for list `limit`, `offset`, `order_by`' },
        ),
      },
      { title: 'Subscribe' },
    ),
    Type.Object({ type: Type.Literal('unsubscribe'), id: Id }, { title: 'Unsubscribe' }),
    Type.Object({ type: Type.Literal('ping') }, { title: 'Ping' }),
  ],
  { description: 'client → server, one JSON text frame each (at most 64 KiB)' },
);

export const ServerMessage = Type.Union(
  [
    Type.Object({ type: Type.Literal('data'), id: Id, data: Type.Unknown({ description: "The stream route's payload data: row | null, {items, total} or a count" }) }, { title: 'Data' }),
    Type.Object(
      {
        type: Type.Literal('error'),
        id: Type.Optional(Type.String({ description: 'The subscription that ended; absent for a message that was not understood (or an auth refused)' })),
        status: Type.Integer({ description: 'The HTTP status of the code, as the stream route would answer' }),
        error: ErrorBody,
      },
      { title: 'Error' },
    ),
    Type.Object({ type: Type.Literal('pong') }, { title: 'Pong' }),
  ],
  { description: 'server → client, one JSON text frame each' },
);
