import type { Output } from '../render/human-renderer.js';

/**
 * A byte stream over the command's stdin that the command can end itself (on a signal), as EOF
 * would. The reader may cancel it (the ACP SDK does on a message past its size limit, closing the
 * connection): then nothing more is read and `cancelled` is told why, and the command ends as if
 * the client had closed it.
 */
export function stoppableInput(
  source: NodeJS.ReadableStream,
  options: { readonly cancelled?: (reason: unknown) => void } = {},
): { stream: ReadableStream<Uint8Array>; stop(): void } {
  let ended = false;
  const onData = (chunk: Buffer | string) => {
    if (!ended)
      controller?.enqueue(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : new Uint8Array(chunk));
  };
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const detach = () => {
    if (ended) return false;
    ended = true;
    source.off('data', onData);
    return true;
  };
  const end = () => {
    if (detach()) controller?.close();
  };
  // Nothing more is read: the stream must not keep the process alive.
  const release = () => (source as { destroy?: () => void }).destroy?.();
  const stream = new ReadableStream<Uint8Array>({
    start(started) {
      controller = started;
      source.on('data', onData);
      source.once('end', end);
      source.once('error', end);
    },
    cancel(reason) {
      if (!detach()) return;
      release();
      options.cancelled?.(reason);
    },
  });
  return {
    stream,
    stop: () => {
      end();
      release();
    },
  };
}

/** A byte stream onto the command's stdout (text: the protocol is newline-delimited JSON). */
export function outputStream(output: Output): WritableStream<Uint8Array> {
  const decoder = new TextDecoder();
  return new WritableStream<Uint8Array>({
    write(chunk) {
      output.write(decoder.decode(chunk, { stream: true }));
    },
  });
}
