/**
 * CLOCK_MONOTONIC in ms: process.hrtime reads the one clock every process of the host shares, so
 * a moment stamped in the daemon process and one stamped here can be subtracted directly.
 */
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

/** Offset of the daemon process's hrtime clock against ours, from the IPC ping with the smallest round trip. */
export async function clockOffset(daemon, pings = 20) {
  let best = { rttMs: Infinity, offsetMs: NaN };
  for (let index = 0; index < pings; index += 1) {
    const sent = monotonicMs();
    const answer = await daemon.request({ type: 'clock' });
    const received = monotonicMs();
    const rtt = received - sent;
    if (rtt < best.rttMs) best = { rttMs: rtt, offsetMs: answer.t - (sent + received) / 2 };
  }
  return best;
}
