import type { Output } from './render/human-renderer.js';

/** Everything a command touches outside itself, so tests can drive commands in-process too. */
export interface CliContext {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Where --answers - reads from. */
  readonly stdin: NodeJS.ReadableStream;
  /** Present when a person can be asked: stdin and stderr are a terminal. */
  readonly terminal: { readonly input: NodeJS.ReadStream; readonly output: NodeJS.WriteStream } | undefined;
  /** Resolves when the user asks to stop (Ctrl-C); the count says how many times. */
  readonly onInterrupt: (listener: (count: number) => void) => () => void;
}

export function processContext(): CliContext {
  return {
    stdout: { write: (text) => void process.stdout.write(text) },
    stderr: { write: (text) => void process.stderr.write(text) },
    environment: process.env,
    cwd: process.cwd(),
    stdin: process.stdin,
    terminal: process.stdin.isTTY && process.stderr.isTTY ? { input: process.stdin, output: process.stderr } : undefined,
    onInterrupt(listener) {
      let count = 0;
      const handler = () => {
        count += 1;
        listener(count);
      };
      process.on('SIGINT', handler);
      return () => process.off('SIGINT', handler);
    },
  };
}
