import type { Output } from '../render/human-renderer.js';

/** A byte stream over the command's stdin that the command can end itself (on a signal), as EOF would. */
export function stoppableInput(source: NodeJS.ReadableStream): { stream: ReadableStream<Uint8Array>; stop(): void } {
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        source.off('data', onData);
        controller.close();
      };
      const onData = (chunk: Buffer | string) => {
        if (!ended)
          controller.enqueue(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : new Uint8Array(chunk));
      };
      source.on('data', onData);
      source.once('end', end);
      source.once('error', end);
      stop = () => {
        end();
        // Nothing more is read: the stream must not keep the process alive.
        (source as { destroy?: () => void }).destroy?.();
      };
    },
  });
  return { stream, stop: () => stop() };
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
