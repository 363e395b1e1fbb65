/**
 * When a driver's host wrote a turn or a stop to its claude, and when it read the turn's result: the
 * moments between which the CLI works, the same for every driver. What lies outside them (the command
 * before the write, the result's handling after the read) is the driver's own part of a turn, which a
 * turn's wall time hides under the CLI's own spread (±1 ms a ~25 ms turn, run to run).
 *
 * Bench only: it wraps the host's socket writes and reads, so it must be installed before the driver
 * opens its claude (bench/peer-leg-host.mjs installs it for every leg). A child's stdin is a net.Socket
 * for every driver; its stdout is one too for the raw loop and the Agent SDK ('data' events: strings
 * for the raw loop, which sets an encoding, Buffers for the SDK), and for
 * Tether's cli transport a socket read with `onread`
 * (packages/provider-claude/src/process/stdout-channel.ts), whose callback is wrapped at connect.
 * Nothing is looked at outside a recording (`OwnParts.begin` to `OwnParts.add`), so the streamed turns
 * a leg also times pay one function call a chunk, not a search of it.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { median } from './stats.mjs';

/** What is recorded, by what the line holds (the CLI's stream-json: one JSON object a line). */
const written = [
  ['turn-written', '"type":"user"'],
  ['stop-written', '"subtype":"interrupt"'],
];
const resultRead = '"type":"result"';

let installed = false;
let recording = false;
let seen = new Map();

function note(kind) {
  if (!seen.has(kind)) seen.set(kind, performance.now());
}

function noteWrite(chunk) {
  if (!recording) return;
  const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1', 0, 512) : '';
  for (const [kind, marker] of written) if (text.includes(marker)) note(kind);
}

/** A chunk read from the child: a string (a stream with an encoding set, as the raw loop's) or a Buffer (searched, not decoded). */
function noteRead(chunk) {
  if (recording && chunk.includes(resultRead)) note('result-read');
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
    if (name === 'data' && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) noteRead(chunk);
    return emit.call(this, name, chunk, ...rest);
  };
  const connect = net.connect;
  net.connect = function (options, ...rest) {
    if (!options?.onread) return connect.call(this, options, ...rest);
    const { buffer, callback } = options.onread;
    const onread = {
      buffer,
      callback: (bytes) => {
        if (recording) noteRead(buffer.subarray(0, bytes));
        return callback(bytes);
      },
    };
    return connect.call(this, { ...options, onread }, ...rest);
  };
}

/** performance.now() of the first `kind` ('turn-written', 'stop-written', 'result-read') of the recording. */
function stdioTimestamp(kind) {
  const at = seen.get(kind);
  if (at === undefined) throw new Error(`no ${kind} was seen on the claude's stdio`);
  return at;
}

/** The part names OwnParts reports, each the median over what was added, in ms. */
export const ownPartNames = ['turnBefore', 'turnCli', 'turnAfter', 'stopBefore', 'stopCli', 'stopAfter'];

/**
 * The driver's own part of each short turn and stop: before, from the call to the turn (or stop)
 * written to claude; after, from the result read to the turn's end seen by the caller; and the CLI's
 * part between them. `begin` right before the turn or the stop is asked, `add` once it has ended.
 */
export class OwnParts {
  constructor() {
    this.figures = Object.fromEntries(ownPartNames.map((name) => [name, []]));
  }

  begin() {
    seen = new Map();
    recording = true;
  }

  /** kind 'turn' or 'stop'; `start`: when it was asked; `endedAt`: when its end was seen. */
  add(kind, start, endedAt) {
    recording = false;
    const written = stdioTimestamp(kind === 'turn' ? 'turn-written' : 'stop-written');
    const resultRead = stdioTimestamp('result-read');
    this.figures[`${kind}Before`].push(written - start);
    this.figures[`${kind}Cli`].push(resultRead - written);
    this.figures[`${kind}After`].push(endedAt - resultRead);
  }

  /** Each part's median, ms (NaN for a kind never added). */
  medians() {
    return Object.fromEntries(Object.entries(this.figures).map(([name, values]) => [name, median(values)]));
  }
}
