// The fake Anthropic API in its own process, so its CPU does not share the bench's event loop.
// The reply depends on a marker in the turn's prompt (the last user text):
//   "[bench:slow]"  a slow stream: BENCH_SLOW_CHUNKS text deltas, BENCH_SLOW_DELAY_MS between SSE events
//                   (default 400 x 25 ms: ~10 s if nobody stops it), for interrupts, closes and crashes;
//   "[bench:short]" a short reply in 3 text deltas, for open/close cycles;
//   "[bench:deltas=N]" or "[bench:deltas=N,delay=D]" N text deltas (D ms between SSE events, default 0),
//                   for the daemon scenario (its turn size differs from the main scenario's);
//   anything else   the same scripted text in DELTAS text_delta events (the main scenario).
// Prints one JSON line {"url","pid","deltas"} on stdout once listening; exits when stdin closes.
import { startFakeAnthropicApi, textReply } from '@tether/fake-anthropic-api';
import { exitWithParent } from './lib/exit-with-parent.mjs';

const deltas = Number(process.env.BENCH_DELTAS ?? 2000);
// One short word per delta ("w0001 ", "w0002 ", ...): splitText then yields exactly `deltas` pieces.
const words = (count) =>
  Array.from({ length: count }, (_, index) => `w${String(index + 1).padStart(4, '0')} `).join('');
const reply = textReply(words(deltas), { chunks: deltas });
const slowChunks = Number(process.env.BENCH_SLOW_CHUNKS ?? 400);
const slowReply = textReply(words(slowChunks), {
  chunks: slowChunks,
  delayMs: Number(process.env.BENCH_SLOW_DELAY_MS ?? 25),
});
const shortReply = textReply('Done: w0001 w0002.', { chunks: 3 });

const sized = new Map();
function sizedReply(count, delayMs) {
  const key = `${count}/${delayMs}`;
  if (!sized.has(key)) sized.set(key, textReply(words(count), { chunks: count, ...(delayMs > 0 ? { delayMs } : {}) }));
  return sized.get(key);
}

const api = await startFakeAnthropicApi({
  responder: (view) => {
    if (view.lastUserText.includes('[bench:slow]')) return slowReply;
    if (view.lastUserText.includes('[bench:short]')) return shortReply;
    const match = /\[bench:deltas=(\d{1,4})(?:,delay=(\d{1,4}))?\]/.exec(view.lastUserText);
    if (match) return sizedReply(Math.max(1, Number(match[1])), Number(match[2] ?? 0));
    return reply;
  },
});
process.stdout.write(`${JSON.stringify({ url: api.url, pid: process.pid, deltas })}\n`);

exitWithParent(() => api.close());
