// The fake Anthropic API in its own process, so its CPU does not share the bench's event loop.
// Every model turn is answered with the same scripted text in DELTAS text_delta events.
// Prints one JSON line {"url","pid","deltas"} on stdout once listening; exits when stdin closes.
import { startFakeAnthropicApi, textReply } from '@tether/fake-anthropic-api';

const deltas = Number(process.env.BENCH_DELTAS ?? 2000);
// One short word per delta ("w0001 ", "w0002 ", ...): splitText then yields exactly `deltas` pieces.
const text = Array.from({ length: deltas }, (_, index) => `w${String(index + 1).padStart(4, '0')} `).join('');
const reply = textReply(text, { chunks: deltas });

const api = await startFakeAnthropicApi({ responder: () => reply });
process.stdout.write(`${JSON.stringify({ url: api.url, pid: process.pid, deltas })}\n`);

let closing = false;
async function stop() {
  if (closing) return;
  closing = true;
  await api.close();
  process.exit(0);
}
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
