import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { watchOutput } from './cli-context.js';

/** A stream that keeps what is written, and can fail as a pipe whose reader died does. */
function pipe(): { stream: Writable; written: string[]; breakIt: () => void } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  });
  const breakIt = () => stream.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  return { stream, written, breakIt };
}

/** Lets the stream's 'error' event (emitted on the next tick, as Node does for EPIPE) and queued deliveries run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('watchOutput: where a closed stdout or stderr goes', () => {
  it('to the command that ends its own way (tether acp) rather than as a stop, and silently', async () => {
    const stdout = pipe();
    const stderr = pipe();
    const output = watchOutput({ stdout: stdout.stream, stderr: stderr.stream });
    const calls: string[] = [];
    output.onClosed(() => calls.push('own'));
    output.onClosedAsStop(() => calls.push('stop'));
    stdout.breakIt();
    await settled();
    expect(calls).toEqual(['own']);
    expect(stderr.written).toEqual([]);
  });

  it('as a stop, once, saying why on the stream still read; what is written to the closed one is dropped', async () => {
    const stdout = pipe();
    const stderr = pipe();
    const output = watchOutput({ stdout: stdout.stream, stderr: stderr.stream });
    const calls: string[] = [];
    output.onClosedAsStop(() => calls.push('first'));
    stdout.breakIt();
    await settled();
    stderr.breakIt();
    output.onClosedAsStop(() => calls.push('later'));
    output.stdout.write('dropped');
    await settled();
    expect(calls).toEqual(['first']);
    expect(stderr.written).toEqual(['■ stdout closed (nobody reads it any more): ending as on SIGHUP\n']);
    expect(stdout.written).toEqual([]);
  });

  it('to the first listener to come when it closed while nothing was driving a run (printing only)', async () => {
    const stdout = pipe();
    const stderr = pipe();
    const output = watchOutput({ stdout: stdout.stream, stderr: stderr.stream });
    stdout.breakIt();
    await settled();
    expect(stderr.written).toEqual([]);
    const calls: string[] = [];
    output.onClosedAsStop(() => calls.push('stop'));
    expect(calls).toEqual([]);
    await settled();
    expect(calls).toEqual(['stop']);
  });
});
