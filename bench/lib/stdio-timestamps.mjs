/**
 * When a driver's host wrote a turn or a stop to its claude, and when it read the turn's result: the
 * moments between which the CLI works, the same for every driver. What lies outside them (the command
 * before the write, the result's handling after the read) is the driver's own part of a turn, which a
 * turn's wall time hides under the CLI's own spread (±1 ms a ~25 ms turn, run to run).
 *
 * Bench only: it wraps the host's socket writes and reads, so it must be installed before the driver
 * opens its claude. A child's stdin is a net.Socket for every driver; its stdout is one too for the
 * Agent SDK ('data' events), and for Tether's cli transport a socket read with `onread`
 * (packages/provider-claude/src/process/stdout-channel.ts), whose callback is wrapped at connect.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';

/** What is recorded, by what the line holds (the CLI's stream-json: one JSON object a line). */
const written = [
  ['turn-written', '"type":"user"'],
  ['stop-written', '"subtype":"interrupt"'],
];
const resultRead = '"type":"result"';

let installed = false;
let seen = new Map();

function note(kind) {
  if (!seen.has(kind)) seen.set(kind, performance.now());
}

function noteWrite(chunk) {
  const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1', 0, 512) : '';
  for (const [kind, marker] of written) if (text.includes(marker)) note(kind);
}

function noteRead(bytes) {
  if (bytes.includes(resultRead)) note('result-read');
}

export function installStdioTimestamps() {
  if (installed) return;
  installed = true;
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (chunk, ...rest) {
    noteWrite(chunk);
    return write.call(this, chunk, ...rest);
  };
  const emit = net.Socket.prototype.emit;
  net.Socket.prototype.emit = function (name, chunk, ...rest) {
    if (name === 'data' && Buffer.isBuffer(chunk)) noteRead(chunk.toString('latin1'));
    return emit.call(this, name, chunk, ...rest);
  };
  const connect = net.connect;
  net.connect = function (options, ...rest) {
    if (!options?.onread) return connect.call(this, options, ...rest);
    const { buffer, callback } = options.onread;
    const onread = {
      buffer,
      callback: (bytes) => {
        noteRead(buffer.toString('latin1', 0, bytes));
        return callback(bytes);
      },
    };
    return connect.call(this, { ...options, onread }, ...rest);
  };
}

/** Forgets what was seen: each kind is kept the first time it is seen after this. */
export function restartStdioTimestamps() {
  seen = new Map();
}

/** performance.now() of the first `kind` ('turn-written', 'stop-written', 'result-read') since the restart. */
export function stdioTimestamp(kind) {
  const at = seen.get(kind);
  if (at === undefined) throw new Error(`no ${kind} was seen on the claude's stdio`);
  return at;
}
