/**
 * `tablebase/client`: the client runtime as a package entry (docs/reference/http-api.md), for
 * front ends that import it rather than paste the file `tablebase gen client` writes. Browser-safe
 * (no Node built-ins) and free of side effects, so bundlers drop what a page does not use.
 *
 * @example
 * import { createClient } from 'tablebase/client';
 * const client = createClient({ baseUrl: 'http://localhost:8080' });
 * await client.auth.signIn({ table: 'users', email, password });
 * for await (const page of client.table('notes').streamList({ limit: 20 })) render(page.items);
 */
import { authClient, baseClient, type AuthClient, type AuthShape, type BaseClient } from './runtime-services.js';
import { collectionClient, Transport, type ClientOptions, type TableClient, type UntypedShape } from './runtime.js';

export * from './runtime.js';
export * from './runtime-services.js';

/** A client that knows nothing of the project's tables; `tablebase gen client` writes a typed one. */
export interface UntypedClient extends BaseClient {
  table(name: string): TableClient<UntypedShape>;
  auth: AuthClient<{ [table: string]: AuthShape & { row: Record<string, unknown>; signUp: Record<string, unknown> } }>;
}

export function createClient(options: ClientOptions): UntypedClient {
  const t = new Transport(options);
  return { ...baseClient(t), table: (name) => collectionClient(t, name), auth: authClient(t) };
}
