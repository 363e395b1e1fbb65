import {
  type FSWatcher,
  type Stats,
  accessSync,
  close,
  constants,
  createReadStream,
  fstat,
  open,
  read,
  statSync,
  watch,
} from 'node:fs';
import { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { InteractionAnswer, InteractionRef } from '@tether/protocol';
import { z } from 'zod';
import { UsageError } from '../usage-error.js';

/** One line of --answers: which interaction, and the respond_interaction answer. */
export const AnswerLine = z.strictObject({ ref: InteractionRef, answer: InteractionAnswer });
export type AnswerLine = z.infer<typeof AnswerLine>;

export type ParsedAnswerLine =
  | { readonly ok: true; readonly line: AnswerLine }
  | { readonly ok: false; readonly problem: string };

export function parseAnswerLine(text: string): ParsedAnswerLine | null {
  const trimmed = text.trim();
  if (trimmed.length === 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return { ok: false, problem: 'not JSON' };
  }
  const parsed = AnswerLine.safeParse(value);
  if (!parsed.success)
    return {
      ok: false,
      problem: parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(line)'}: ${issue.message}`)
        .slice(0, 3)
        .join('; '),
    };
  return { ok: true, line: parsed.data };
}

/**
 * Refuses (UsageError) an --answers FILE that cannot be read, before the command opens or records
 * anything: found missing once the session is open, it would leave a session and an agent behind.
 * Only looked at, never opened: opening a FIFO is the writer's cue.
 */
export function checkAnswersSource(source: string): void {
  const what = `--answers ${source}`;
  const fix = 'Give a file or a FIFO (mkfifo) that exists and can be read, or - for stdin.';
  let stats: Stats;
  try {
    stats = statSync(source);
    accessSync(source, constants.R_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'ENOENT' || code === 'ENOTDIR'
        ? `${what}: no such file. ${fix}`
        : `${what} cannot be read (${code ?? String(error)}). ${fix}`,
    );
  }
  if (stats.isDirectory()) throw new UsageError(`${what} is a directory. ${fix}`);
}

export interface AnswerLineHandlers {
  line(parsed: ParsedAnswerLine): void;
  /** No more lines can come: stdin or a FIFO reached its end (the writer closed it). */
  ended(): void;
  /** The source could not be read; nothing more comes from it. */
  failed(error: Error): void;
}

/**
 * Reads answer lines from stdin ("-"), a FIFO or a regular file as they arrive, until the returned
 * function is called (it lets go of the source, so an idle FIFO writer does not hold the process).
 * Stdin and a FIFO are read to their end. A regular file is followed like `tail -f`: lines appended
 * to it are read as they come, since a run's interaction refs are only known once it asks.
 */
export function readAnswerLines(
  source: string,
  stdin: NodeJS.ReadableStream,
  handlers: AnswerLineHandlers,
): () => void {
  let stopped = false;
  let stopSource: (() => void) | null = null;
  const stop = () => {
    stopped = true;
    stopSource?.();
  };
  const sink: SourceSink = {
    line: (text) => {
      const parsed = stopped ? null : parseAnswerLine(text);
      if (parsed) handlers.line(parsed);
    },
    ended: () => {
      if (stopped) return;
      stop();
      handlers.ended();
    },
    failed: (error) => {
      if (stopped) return;
      stop();
      handlers.failed(error);
    },
  };
  const start = (fd: number, stats: Stats) => {
    if (stats.isFile()) return followFile(source, fd, sink);
    if (stats.isFIFO() || stats.isSocket())
      return readStream(new Socket({ fd, readable: true, writable: false }), sink, { owned: true });
    return readStream(createReadStream('', { fd }), sink, { owned: true });
  };
  if (source === '-') {
    stopSource = readStream(stdin, sink, { owned: false });
    return stop;
  }
  // Non-blocking: a FIFO is then open at once (no writer needed yet) and read through the event
  // loop, never in a thread-pool read that would keep the process alive until its writer closes.
  open(source, constants.O_RDONLY | constants.O_NONBLOCK, (openError, fd) => {
    if (openError) return sink.failed(openError);
    fstat(fd, (statError, stats) => {
      if (statError || stopped) close(fd, () => undefined);
      if (statError) return sink.failed(statError);
      if (stopped) return;
      try {
        stopSource = start(fd, stats);
      } catch (error) {
        close(fd, () => undefined);
        sink.failed(error as Error);
      }
    });
  });
  return stop;
}

interface SourceSink {
  line(text: string): void;
  ended(): void;
  failed(error: Error): void;
}

/** Splits text into lines as it arrives; a line counts once its newline has come (or the source ended). */
class LineBuffer {
  private readonly decoder = new StringDecoder('utf8');
  /** The text after the last newline so far. */
  pending = '';
  private readonly onLine: (text: string) => void;

  constructor(onLine: (text: string) => void) {
    this.onLine = onLine;
  }

  push(chunk: string | Buffer): void {
    this.pending += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    for (let newline = this.pending.indexOf('\n'); newline !== -1; newline = this.pending.indexOf('\n')) {
      const line = this.pending.slice(0, newline);
      this.pending = this.pending.slice(newline + 1);
      this.onLine(line);
    }
  }

  /** The rest is a line of its own. */
  flush(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    if (rest.length > 0) this.onLine(rest);
  }

  /** What came after the last newline is a line after all (bytes of a character still to come stay). */
  takePending(): void {
    const rest = this.pending;
    this.pending = '';
    this.onLine(rest);
  }

  discard(): void {
    this.decoder.end();
    this.pending = '';
  }
}

/** Stdin or a FIFO, to its end. Stdin is only paused when reading stops: it is the process's, not ours to destroy. */
function readStream(input: NodeJS.ReadableStream, sink: SourceSink, options: { owned: boolean }): () => void {
  const lines = new LineBuffer(sink.line);
  const onData = (chunk: string | Buffer) => lines.push(chunk);
  const onEnd = () => {
    lines.flush();
    sink.ended();
  };
  input.on('data', onData);
  input.on('end', onEnd);
  // Never removed: an error on stdin after reading stopped must not become an unhandled 'error'.
  input.on('error', sink.failed);
  if ((input as { readableEnded?: boolean }).readableEnded === true) queueMicrotask(onEnd);
  return () => {
    input.off('data', onData);
    input.off('end', onEnd);
    if (options.owned) (input as NodeJS.ReadableStream & { destroy(): void }).destroy();
    else input.pause();
  };
}

/** How often a followed file is looked at even without a change notification (a network filesystem sends none). */
const followPollMs = 1_000;

/**
 * A regular file, followed as it grows: read to its current end, then again on every change (and
 * every second), until stopped. A file cut shorter than what was read is read again from its start.
 */
function followFile(source: string, fd: number, sink: SourceSink): () => void {
  const buffer = Buffer.alloc(64 * 1024);
  const lines = new LineBuffer(sink.line);
  let position = 0;
  // One read (or the look at the size after it) at a time; a change meanwhile asks for one more pass.
  let busy = false;
  let again = false;
  let stopped = false;
  const release = () => close(fd, () => undefined);
  const done = () => {
    busy = false;
    if (stopped) release();
    else if (again) readMore();
  };
  const readMore = (): void => {
    if (stopped) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    again = false;
    read(fd, buffer, 0, buffer.length, position, (readError, bytesRead) => {
      if (stopped) return done();
      if (readError) {
        busy = false;
        return sink.failed(readError);
      }
      if (bytesRead > 0) {
        position += bytesRead;
        lines.push(buffer.subarray(0, bytesRead));
        busy = false;
        return readMore();
      }
      // At the end for now: a last line written without its newline counts once it is a whole answer.
      if (parseAnswerLine(lines.pending)?.ok === true) lines.takePending();
      fstat(fd, (statError, stats) => {
        if (!statError && stats.size < position) {
          position = 0;
          lines.discard();
          again = true;
        }
        done();
      });
    });
  };
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(source, { persistent: false }, () => readMore());
    watcher.on('error', () => watcher?.close());
  } catch {
    // No change notifications here (a watch limit, an unusual filesystem): the poll still follows it.
  }
  const poll = setInterval(readMore, followPollMs);
  poll.unref();
  readMore();
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(poll);
    watcher?.close();
    if (!busy) release();
  };
}
