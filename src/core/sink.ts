import type { Readable } from 'node:stream';

/** Request headers, lower-cased (node:http's IncomingHttpHeaders fits). */
export interface RequestHeaders {
  readonly [name: string]: string | string[] | undefined;
  readonly authorization?: string;
  readonly accept?: string;
  readonly 'content-type'?: string;
  readonly 'content-length'?: string;
  readonly range?: string;
  readonly 'if-none-match'?: string;
}

/** A request body still to be read (an upload): the stream plus what a parser needs to know. */
export type RequestStream = Readable & {
  readonly headers: RequestHeaders;
  /** True once the whole body arrived (false on a connection cut mid-upload). */
  readonly complete: boolean;
};

/** What a file answer depends on in the request (conditional and range requests). */
export interface RequestHead {
  readonly method?: string | undefined;
  readonly headers: RequestHeaders;
}

/**
 * Where a streamed or file answer goes. `http/sink.ts` implements it over a node:http response;
 * the live transport and the photo server write to it, so neither sees node:http.
 */
export interface Sink {
  /** True once the status line and headers are out. */
  readonly started: boolean;
  /** The client is gone (its socket closed) or the answer was destroyed. */
  readonly gone: boolean;
  /** Bytes accepted but not yet sent: how far behind a slow reader is. */
  readonly bufferedBytes: number;
  /** Sends the status and headers now (streams flush at once; docs/reference/live.md). */
  start(status: number, headers: Readonly<Record<string, string | number>>): void;
  write(chunk: string | Buffer): void;
  end(chunk?: string | Buffer): void;
  /** Abandons the answer: the client sees the connection close. */
  destroy(): void;
  /** Copies a readable to the answer with backpressure; resolves when done or when the client left. */
  pipeFrom(source: NodeJS.ReadableStream): Promise<void>;
  /** Calls `listener` when the client goes away or the answer fails; answers a function that stops listening. */
  onGone(listener: () => void): () => void;
}
