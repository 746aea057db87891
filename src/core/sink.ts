/**
 * Where a streamed or raw answer goes. `http/` implements it over a node:http response; the live
 * transport, the photo server and static files write to it, so they never see node:http.
 */
export interface Sink {
  /** Sets the status and headers; at most once, before the first write. */
  start(status: number, headers: Record<string, string | number>): void;
  /** False when the client is slow: wait for `onDrain` before writing more (backpressure). */
  write(chunk: string | Buffer): boolean;
  end(chunk?: string | Buffer): void;
  /** Abandons the answer (the client gets a reset connection). */
  destroy(): void;
  onDrain(listener: () => void): void;
  /** The client went away, or the answer ended. */
  onClose(listener: () => void): void;
  readonly started: boolean;
  readonly closed: boolean;
}
