#!/usr/bin/env node
// A scripted stand-in for the claude CLI, for faults the real binary will not produce on demand
// (junk output, exiting without a result, dying by signal). The script comes from the
// TETHER_FAKE_CLI_SCRIPT environment variable: a JSON array with one entry per user line
// received, each a list of steps:
//   {"line": <object>}   write the object as one JSON line ("$UUID" → the user line's uuid,
//                        "$SESSION" → the --session-id / --resume argument)
//   {"raw": "text"}      write text as is (junk, ANSI, partial lines); "times": N repeats it
//                        (an enormous line: 65 MiB without a newline), written as the pipe drains
//   {"exit": 3}          exit with that code
//   {"kill": "SIGKILL"}  kill itself with that signal
//   {"hang": true}       stop reading and writing for good (a wedged CLI); only a signal ends it
//   {"hang": "<file>"}   the same, only while <file> does not exist yet (it is created), so a later
//                        process running the same script goes on with its next step
//   {"once": "<file>", "steps": [...]}  those steps only while <file> does not exist yet (it is
//                        created), so a later process running the same script skips them
//   {"ignore": "SIGTERM"} ignore that signal from now on (only SIGKILL ends a wedged CLI then)
//   {"closeStdin": true} close its stdin (the host's next write fails with EPIPE), go on with the
//                        remaining steps, then stay alive (only a signal ends it)
// When the script runs out, stdin EOF ends the process with exit code 0.
// `--version` prints the version it stands in for (2.1.332) and exits.
// Control requests from the host are answered from TETHER_FAKE_CLI_CONTROL, a JSON object keyed by
// subtype: {"interrupt": {"response": {...}, "then": [steps]}} or a list of those for successive
// requests ("$UUID" → the last user line's uuid); "before": [steps] run ahead of the answer, and
// "error": "text" answers with an error instead. A subtype not listed gets no answer at all.
import { closeSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

if (process.argv[2] === '--version') {
  // What the probe and the version check read: the version the fake stands in for.
  process.stdout.write('2.1.332 (Claude Code)\n');
  process.exit(0);
}
const script = JSON.parse(process.env.TETHER_FAKE_CLI_SCRIPT ?? '[]');
/** Set by a closeStdin step: once the steps are done the process stays alive instead of exiting. */
let stdinClosed = false;
const controls = JSON.parse(process.env.TETHER_FAKE_CLI_CONTROL ?? '{}');
let lastUuid = '';
const argv = process.argv.slice(2);
// The CLI transport passes `--session-id ID`; the Agent SDK passes `--session-id=ID`.
const sessionFlag = argv.findIndex((value) => /^--(session-id|resume)(=|$)/.test(value));
const session =
  sessionFlag < 0
    ? 'no-session'
    : argv[sessionFlag].includes('=')
      ? argv[sessionFlag].split('=')[1]
      : argv[sessionFlag + 1];
if (process.env.TETHER_FAKE_CLI_ARGV_FILE) {
  const { appendFileSync } = await import('node:fs');
  appendFileSync(process.env.TETHER_FAKE_CLI_ARGV_FILE, `${JSON.stringify(argv)}\n`);
}

function substitute(value, uuid) {
  return JSON.parse(JSON.stringify(value).replaceAll('$UUID', uuid).replaceAll('$SESSION', session));
}

let turn = 0;
const lines = createInterface({ input: process.stdin });
for await (const text of lines) {
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    process.stderr.write('Error parsing streaming input line\n');
    process.exit(1);
  }
  if (message.type === 'control_request') {
    // A list answers successive requests of that subtype in order.
    const entry = controls[message.request?.subtype];
    const answer = Array.isArray(entry) ? entry.shift() : entry;
    if (!answer) continue;
    await runSteps(answer.before ?? [], lastUuid);
    const response = substitute(answer.response ?? {}, lastUuid);
    const body =
      answer.error === undefined
        ? { subtype: 'success', request_id: message.request_id, response }
        : { subtype: 'error', request_id: message.request_id, error: answer.error };
    process.stdout.write(`${JSON.stringify({ type: 'control_response', response: body })}\n`);
    await runSteps(answer.then ?? [], lastUuid);
    continue;
  }
  if (message.type !== 'user') continue;
  lastUuid = message.uuid ?? '';
  const steps = script[turn] ?? [];
  turn += 1;
  await runSteps(steps, message.uuid ?? '');
}
process.exit(0);

/** Whether `file` did not exist yet; it does afterwards. */
function firstTime(file) {
  try {
    writeFileSync(file, '', { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}

async function runSteps(steps, uuid) {
  await runEach(steps, uuid);
  if (stdinClosed) {
    // Closing stdin ends the read loop; stay alive like a CLI that still has work (a signal ends it).
    setInterval(() => {}, 60_000);
    await new Promise(() => {});
  }
}

async function runEach(steps, uuid) {
  for (const step of steps) {
    if (step.line) process.stdout.write(`${JSON.stringify(substitute(step.line, uuid))}\n`);
    if (step.raw !== undefined) {
      for (let count = step.times ?? 1; count > 0; count -= 1) {
        if (!process.stdout.write(step.raw)) await new Promise((resolve) => process.stdout.once('drain', resolve));
      }
    }
    if (step.exit !== undefined) {
      process.stdout.write('', () => process.exit(step.exit));
      await new Promise(() => {});
    }
    if (step.once !== undefined && firstTime(step.once)) await runEach(step.steps, uuid);
    if (step.kill) process.kill(process.pid, step.kill);
    if (step.ignore) process.on(step.ignore, () => {});
    if (step.closeStdin) {
      lines.close();
      process.stdin.destroy();
      // destroy() leaves fd 0 open (Node keeps stdio fds): close it, so the host's writes fail.
      closeSync(0);
      stdinClosed = true;
    }
    if (typeof step.hang === 'string' && !firstTime(step.hang)) continue;
    if (step.hang) {
      lines.close();
      process.stdin.pause();
      setInterval(() => {}, 60_000);
      await new Promise(() => {});
    }
  }
}
