// Where the writers' bytes go (text, Arrow, Parquet, Perfetto): a function given each finished buffer, in
// order, which is its to keep. A returned promise (any thenable) is awaited before the writer goes on
// (backpressure); any other return value is ignored, so Node's `(b) => stream.write(b)` (a boolean) and
// `(b) => fileHandle.write(b)` (a promise of the bytes written) are sinks as they are.
export type ByteSink = (bytes: Uint8Array) => unknown;

/** What the writer waits for after calling a sink: the promise it returned, or undefined. */
export function sinkWait(returned: unknown): Promise<void> | undefined {
  if (returned === null || (typeof returned !== 'object' && typeof returned !== 'function')) return undefined;
  const then = (returned as PromiseLike<unknown>).then;
  return typeof then === 'function' ? Promise.resolve(returned as PromiseLike<unknown>).then(() => undefined) : undefined;
}
