import { once } from 'node:events';
import { rmdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createCreatorNamedFolder } from './creator-named-folders.js';

/**
 * While a child's stdout streams, how long after a read the next waits. The CLI writes every
 * streamed delta with a write of its own, and a reader that takes each as it comes pays a wake-up
 * and a read for every line (~1,000 for a 2,000-delta turn: most of a host's CPU in it, and CPU
 * the CLI itself then lacks on a small machine). Paced, a burst's lines are read ~25 at a time.
 * A read that does not follow another within this long is not a burst's: it is never held back.
 */
export const stdoutReadPaceMs = 2;

/**
 * After a write to the child, how long reads are not paced: what it says back (a control
 * response, a stopped turn's result) comes within a few milliseconds and is read as it comes.
 */
const answerWindowMs = 20;

/** Far more than a burst's 2 ms of lines (~12 KB for CLI 2.1.332 streaming as fast as it can). */
const readBufferBytes = 64 * 1024;
const newline = 0x0a;

/** The private folders pairs connect through (swept at a host's start when their creator is gone). */
export const stdoutFolderPrefix = 'tether-stdout-';
/** The longest socket path connect() takes: sun_path less its terminating NUL (108 bytes on Linux, 104 on macOS and the BSDs). */
const longestSocketPathBytes = process.platform === 'linux' ? 107 : 103;
const socketName = 'stdout.sock';

/**
 * A new private folder (0700) for a pair's socket. Named for this host: one killed while its pair
 * connects leaves it, and the next host's start-up sweep removes it once this host is gone. Under
 * a temporary directory too long for that name and the socket, a shorter anonymous one (not swept).
 */
async function createChannelFolder(parent: string): Promise<string> {
  const named = await createCreatorNamedFolder(stdoutFolderPrefix, parent);
  if (Buffer.byteLength(path.join(named, socketName)) <= longestSocketPathBytes) return named;
  await rm(named, { recursive: true, force: true });
  return mkdtemp(path.join(parent, stdoutFolderPrefix));
}

/** What a started channel hands its reads to. */
export interface StdoutReader {
  /** One read's bytes: a view of the channel's buffer, valid only during the call. */
  onData(chunk: Buffer): void;
  /**
   * Whether the read just handed on ended inside a stream of lines that may wait to be read together
   * (streamed text). Anything else (a block's start, a tool call, a result) is followed by a read at
   * once: what comes next, a block's first text for one, is not held back.
   */
  streaming(): boolean;
  /** The child's end was closed by everyone holding it (the child and what inherited its stdout). */
  onEnd(): void;
}

/**
 * A child's stdout as one end of a connected pair of Unix stream sockets (what libuv gives a child
 * for 'pipe' too), so this side can read it with `onread` and pause it: a paused socket is not read
 * at all (Node's own stdio stream keeps reading into its buffer). `childEnd` goes to spawn as the
 * child's fd 1 and is closed here once the child has it; `start` then reads the other end, paced.
 */
export class StdoutChannel {
  readonly childEnd: net.Socket;
  private readonly socket: net.Socket;
  private reader: StdoutReader | null = null;
  private resumeTimer: NodeJS.Timeout | null = null;
  /** The last read, or the end of the last pause (what is read then still belongs to the burst). */
  private lastReadAt = Number.NEGATIVE_INFINITY;
  /** Until then (the answer window after a write) reads are not paced. */
  private unpacedUntil = Number.NEGATIVE_INFINITY;
  private closed = false;

  private constructor(childEnd: net.Socket, socket: net.Socket) {
    this.childEnd = childEnd;
    this.socket = socket;
    socket.on('end', () => this.end());
    // A reset or any other failure of a local socket ends the output like EOF: the exit says the rest.
    socket.on('error', () => this.end());
    socket.on('close', () => this.end());
  }

  /**
   * Connects a pair through a listening socket in a private folder (mode 0700: no other local user
   * can connect to it), removed with the listener as soon as the pair is connected.
   */
  static async open(parent: string = os.tmpdir()): Promise<StdoutChannel> {
    if (process.platform === 'win32') throw new Error('stdout channels are Unix sockets');
    const folder = await createChannelFolder(parent);
    // The accepted end only passes to the child: it is never read here.
    const server = net.createServer({ pauseOnConnect: true });
    try {
      server.listen(path.join(folder, socketName));
      await once(server, 'listening');
      const accepted = once(server, 'connection') as Promise<[net.Socket]>;
      let channel: StdoutChannel | null = null;
      const buffer = Buffer.allocUnsafe(readBufferBytes);
      const socket = net.connect({
        path: path.join(folder, socketName),
        onread: {
          buffer,
          callback: (bytes) => channel?.read(buffer.subarray(0, bytes)) ?? false,
        },
      });
      // Nothing is read before a child has the other end: until then the pair only waits.
      socket.pause();
      try {
        const [[childEnd]] = await Promise.all([accepted, once(socket, 'connect')]);
        channel = new StdoutChannel(childEnd, socket);
        childEnd.unref();
        socket.unref();
        return channel;
      } catch (error) {
        socket.destroy();
        void accepted.then(
          ([childEnd]) => childEnd.destroy(),
          () => undefined,
        );
        throw error;
      }
    } finally {
      server.close();
      removeFolder(folder);
    }
  }

  /** Once the child has its end (spawn has returned): closes ours, and reads the child's output for `reader`. */
  start(reader: StdoutReader): void {
    if (this.closed) return reader.onEnd();
    this.reader = reader;
    this.childEnd.destroy();
    // As a child's stdio pipe: the host stays up while the child's output is still coming.
    this.socket.ref();
    this.socket.resume();
  }

  /**
   * The child was written to (a turn, a control request, an answer): what it says back is read as
   * it comes, not after the pause of a burst it may be answering in (a stop's result, for one).
   */
  expectAnswer(): void {
    this.unpacedUntil = performance.now() + answerWindowMs;
    if (!this.resumeTimer) return;
    clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
    this.socket.resume();
  }

  /** Stops reading: a descendant that inherited the child's stdout may hold it open forever. */
  close(): void {
    this.childEnd.destroy();
    this.socket.destroy();
    this.end();
  }

  /** Whether reading is over (EOF, a failure, or close). */
  get ended(): boolean {
    return this.closed;
  }

  /** false pauses the socket (onread's contract): a read close after another waits out the pace. */
  private read(chunk: Buffer): boolean {
    this.reader?.onData(chunk);
    if (this.closed) return false;
    const now = performance.now();
    const inBurst = now - this.lastReadAt < stdoutReadPaceMs && now >= this.unpacedUntil;
    this.lastReadAt = now;
    // A read that ends inside a line is followed at once: the rest of the line is on its way, and a
    // long line (a large tool result) would otherwise crawl in at a buffer per pause.
    if (!inBurst || chunk[chunk.length - 1] !== newline || !this.reader?.streaming()) return true;
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = null;
      this.lastReadAt = performance.now();
      this.socket.resume();
    }, stdoutReadPaceMs);
    return false;
  }

  private end(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
    this.reader?.onEnd();
  }
}

/**
 * Closing the listener removed its socket file, so the folder is empty: removed at once (an async
 * recursive rm took ~10 ms of a host's first session open), in the background if that failed.
 */
function removeFolder(folder: string): void {
  try {
    rmdirSync(folder);
  } catch {
    void rm(folder, { recursive: true, force: true }).catch(() => undefined);
  }
}
