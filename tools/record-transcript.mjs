#!/usr/bin/env node
/**
 * Records transcripts of the real claude CLI driven against @tether/fake-anthropic-api, for translator tests.
 *
 *   ./dev npm run build        (the recorder loads the built @tether/fake-anthropic-api and @tether/provider-claude)
 *   ./dev node tools/record-transcript.mjs [scenario ...]     (default: every scenario; --help lists them)
 *
 * Writes packages/provider-claude/src/__fixtures__/<scenario>.ndjson (every stdout line of the CLI, parsed, in order)
 * and <scenario>.stdin.ndjson (every line written to its stdin); some scenarios add <scenario>.stderr.txt and
 * <scenario>.exit.json. The temp HOME and cwd are replaced by /tmp/HOME and /tmp/WORKSPACE.
 * The CLI gets an explicit environment (only PATH is inherited), the protocol flags Tether launches it with
 * (provider-claude's protocolArguments) and the binary the pinned Agent SDK package bundles (bundledBinaryPath).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { errorReply, startFakeAnthropicApi, textReply, thinkingReply, toolUseReply } from '@tether/fake-anthropic-api';
import { bundledBinaryPath, protocolArguments } from '@tether/provider-claude';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixturesDir = path.join(root, 'packages/provider-claude/src/__fixtures__');
const WAIT_MS = 30_000;

const isResult = (frame) => frame.type === 'result';

function claudeBinary() {
  const bundled = bundledBinaryPath();
  if (bundled === undefined)
    throw new Error(
      'The bundled claude binary (@anthropic-ai/claude-agent-sdk platform package) is missing. Run "./dev npm ci".',
    );
  return bundled;
}

/** A scenario whose every model answer is `text`, stopped for `stopReason`. */
function stopsEveryAnswer(stopReason, text, prompt) {
  return {
    async run(s) {
      s.api.setResponder(() => ({ kind: 'message', content: [{ type: 'text', text, chunks: 2 }], stopReason }));
      s.send(prompt);
      await s.waitFor(isResult);
    },
  };
}

/** @type {Record<string, { bypass?: boolean; maxRetries?: number; args?: () => string[]; extraFiles?: boolean; run: (s: Session) => Promise<void> }>} */
const scenarios = {
  'text-turn': {
    async run(s) {
      s.api.enqueue(
        textReply('Hello! This reply arrives in five separate text deltas.', {
          chunks: 5,
          usage: { inputTokens: 120, outputTokens: 14, cacheReadTokens: 30, cacheCreationTokens: 8 },
        }),
      );
      s.send('Say hello.');
      await s.waitFor(isResult);
    },
  },
  'two-turns': {
    async run(s) {
      s.api.enqueue(
        textReply('First answer.', { chunks: 2 }),
        textReply('Second answer, same process.', { chunks: 3 }),
      );
      s.send('First question.');
      await s.waitFor(isResult);
      s.send('Second question.');
      await s.waitForNth(isResult, 2);
    },
  },
  'auto-compact': {
    async run(s) {
      // The first answer reports a context of 995,000 tokens (of the model's 1,000,000-token window): before
      // the second turn's call the CLI compacts the conversation on its own (the fake API answers the summary request).
      s.api.enqueue(
        textReply('First answer.', { chunks: 2, usage: { inputTokens: 995_000, outputTokens: 10 } }),
        textReply('Second answer, after the compaction.', { chunks: 2 }),
      );
      s.send('First question.');
      await s.waitFor(isResult);
      s.send('Second question.');
      await s.waitForNth(isResult, 2);
    },
  },
  'thinking-turn': {
    async run(s) {
      s.api.enqueue(
        thinkingReply('The user wants a short answer; keep it brief.', 'Here is a brief answer.', { chunks: 3 }),
      );
      s.send('Think, then answer briefly.');
      await s.waitFor(isResult);
    },
  },
  'tool-use-bypass': {
    bypass: true,
    async run(s) {
      s.api.enqueue(
        toolUseReply('Bash', { command: 'echo hi', description: 'Print hi' }, { text: 'Running the command.' }),
        textReply('The command printed "hi".'),
      );
      s.send('Run echo hi.');
      await s.waitFor(isResult);
    },
  },
  // Every answer is cut at the output limit: the CLI asks the model to continue (three times), then gives up.
  'max-tokens-stop': stopsEveryAnswer(
    'max_tokens',
    'This answer is cut off at the output limit',
    'Write a very long essay.',
  ),
  // The fake writes whatever stop reason it is given; the CLI retries a refusal once, then gives up.
  'refusal-stop': stopsEveryAnswer('refusal', 'I cannot help with that', 'Do something refused.'),
  'edit-tool-bypass': {
    bypass: true,
    async run(s) {
      writeFileSync(path.join(s.cwd, 'notes.txt'), 'hello world\n');
      s.api.enqueue(
        toolUseReply(
          'Read',
          { file_path: path.join(s.cwd, 'notes.txt') },
          { text: 'Reading the file first.', chunks: 1 },
        ),
        toolUseReply(
          'Edit',
          { file_path: path.join(s.cwd, 'notes.txt'), old_string: 'hello world', new_string: 'hello tether' },
          { chunks: 1 },
        ),
        textReply('The file now says hello tether.'),
      );
      s.send('Change world to tether in notes.txt.');
      await s.waitFor(isResult);
    },
  },
  'api-error-500': {
    maxRetries: 1,
    async run(s) {
      s.api.setResponder(() => errorReply(500, { message: 'Internal server error (scripted)' }));
      s.send('This request will fail.');
      await s.waitFor(isResult);
    },
  },
  'resume-unknown': {
    args: () => ['--resume', randomUUID()],
    extraFiles: true,
    async run(s) {
      // A host writes its first message right away; the CLI fails at startup anyway.
      s.send('Continue where we left off.');
      await s.exited;
    },
  },
  'permission-request-default-mode': {
    async run(s) {
      s.api.enqueue(
        // One input delta: the temp path must not be split, so the recorder can replace it.
        toolUseReply(
          'Write',
          { file_path: path.join(s.cwd, 'notes.txt'), content: 'hello\n' },
          { text: 'I will write the file.', chunks: 1 },
        ),
        textReply('Understood: the write was denied, so I did not create the file.'),
      );
      s.send('Create notes.txt containing hello.');
      const request = await s.waitFor((f) => f.type === 'control_request' && f.request?.subtype === 'can_use_tool');
      s.write({
        type: 'control_response',
        response: {
          subtype: 'success',
          request_id: request.request_id,
          response: { behavior: 'deny', message: 'approvals are not enabled' },
        },
      });
      await s.waitFor(isResult);
    },
  },
  'subagent-frames': {
    bypass: true,
    async run(s) {
      s.api.enqueue(
        toolUseReply('Agent', {
          description: 'Say hello',
          prompt: 'SUBAGENT TASK: reply with one short greeting.',
          subagent_type: 'general-purpose',
          run_in_background: false,
        }),
      );
      // The subagent's own request carries `cc_is_subagent=true` in its billing system block (view.isSubagent).
      s.api.setResponder((view) => {
        if (view.isSubagent) return textReply('Hello from the subagent.', { chunks: 2 });
        if (view.toolResults.length > 0) return textReply('The subagent said hello.');
        return undefined;
      });
      s.send('Ask a subagent to say hello.');
      await s.waitFor(isResult);
    },
  },
  'subagent-background': {
    bypass: true,
    async run(s) {
      s.api.enqueue(
        toolUseReply('Agent', {
          description: 'Say hello',
          prompt: 'SUBAGENT TASK: reply with one short greeting.',
          subagent_type: 'general-purpose',
        }),
      );
      s.api.setResponder((view) => {
        if (view.isSubagent) return textReply('Hello from the background subagent.', { chunks: 2 });
        if (view.toolResults.length > 0) return textReply('A background agent is working on it.');
        if (view.lastUserText.includes('task-notification') || view.lastUserText.includes('background'))
          return textReply('The background agent has finished and said hello.');
        return undefined;
      });
      s.send('Ask a background subagent to say hello.');
      await s.waitFor((f) => f.type === 'system' && f.subtype === 'task_notification');
      await s.waitFor(
        (f) => isResult(f) && s.frames.indexOf(f) > s.frames.findIndex((g) => g.subtype === 'task_notification'),
      );
    },
  },
};

/**
 * @typedef {object} Session
 * @property {import('@tether/fake-anthropic-api').FakeAnthropicApi} api
 * @property {string} cwd
 * @property {object[]} frames
 * @property {(text: string) => void} send
 * @property {(value: unknown) => void} write
 * @property {(predicate: (frame: any) => boolean) => Promise<any>} waitFor
 * @property {(predicate: (frame: any) => boolean, n: number) => Promise<any>} waitForNth
 * @property {Promise<{ code: number | null; signal: string | null }>} exited
 */

async function record(name) {
  const scenario = scenarios[name];
  if (scenario === undefined) throw new Error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(', ')}`);
  const started = Date.now();
  const api = await startFakeAnthropicApi();
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'tether-rec-home-')));
  const cwd = realpathSync(mkdtempSync(path.join(tmpdir(), 'tether-rec-ws-')));
  const stable = (text) =>
    text
      .split(home)
      .join('/tmp/HOME')
      .split(cwd)
      .join('/tmp/WORKSPACE')
      .split(cwd.replace(/[^a-zA-Z0-9]/g, '-'))
      .join('-tmp-WORKSPACE');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: String(scenario.maxRetries ?? 1),
    TERM: 'dumb',
    CI: 'true',
  };
  const args = [...protocolArguments];
  if (scenario.bypass) {
    env.IS_SANDBOX = '1';
    args.push('--permission-mode', 'bypassPermissions');
  }
  args.push(...(scenario.args?.() ?? []));

  const child = spawn(claudeBinary(), args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const frames = [];
  const stdinLines = [];
  const listeners = new Set();
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk.toString('utf8')));
  child.stdin.on('error', () => {});
  createInterface({ input: child.stdout }).on('line', (line) => {
    const frame = JSON.parse(stable(line));
    frames.push(frame);
    for (const listener of [...listeners]) listener(frame);
  });
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));

  const waitForNth = (predicate, n) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const hits = frames.filter(predicate);
        if (hits.length < n) return false;
        listeners.delete(listener);
        clearTimeout(timer);
        resolve(hits[n - 1]);
        return true;
      };
      const listener = () => void check();
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(
          new Error(
            `${name}: no matching frame within ${WAIT_MS} ms (last: ${frames
              .slice(-5)
              .map((f) => `${f.type}/${f.subtype ?? f.event?.type ?? ''}`)
              .join(', ')})`,
          ),
        );
      }, WAIT_MS);
      if (check()) return;
      listeners.add(listener);
      void exited.then(() => {
        if (!check() && listeners.delete(listener)) {
          clearTimeout(timer);
          reject(new Error(`${name}: claude exited before the expected frame; stderr: ${stderr.slice(-400)}`));
        }
      });
    });
  const write = (value) => {
    const line = JSON.stringify(value);
    stdinLines.push(JSON.parse(stable(line)));
    child.stdin.write(`${line}\n`);
  };
  /** @type {Session} */
  const session = {
    api,
    cwd,
    frames,
    send: (text) =>
      write({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, uuid: randomUUID() }),
    write,
    waitFor: (predicate) => waitForNth(predicate, 1),
    waitForNth,
    exited,
  };

  try {
    await scenario.run(session);
    child.stdin.end();
    const exit = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(undefined), WAIT_MS))]);
    if (exit === undefined) throw new Error(`${name}: claude did not exit after stdin ended`);
    const toNdjson = (lines) => lines.map((line) => `${JSON.stringify(line)}\n`).join('');
    const leaked = [toNdjson(frames), toNdjson(stdinLines), stderr].find((text) => text.includes('tether-rec-'));
    if (leaked !== undefined)
      throw new Error(`${name}: a temp path survived the replacement (split across deltas?); not writing the fixture`);
    writeFileSync(path.join(fixturesDir, `${name}.ndjson`), toNdjson(frames));
    writeFileSync(path.join(fixturesDir, `${name}.stdin.ndjson`), toNdjson(stdinLines));
    if (scenario.extraFiles) {
      writeFileSync(path.join(fixturesDir, `${name}.stderr.txt`), stable(stderr));
      writeFileSync(path.join(fixturesDir, `${name}.exit.json`), `${JSON.stringify(exit)}\n`);
    }
    const kinds = api.requests
      .map((r) => r.kind + (r.view?.isSubagent ? '(subagent)' : '') + (r.unscripted ? '(unscripted)' : ''))
      .join(', ');
    console.log(
      `${name}: ${frames.length} stdout lines, ${stdinLines.length} stdin lines, exit ${exit.code}, ${Date.now() - started} ms; requests: ${kinds || 'none'}`,
    );
  } finally {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGTERM');
      await exited;
    }
    await api.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2);
if (wanted.includes('--help') || wanted.includes('-h')) {
  console.log(
    `usage: node tools/record-transcript.mjs [scenario ...]\nscenarios: ${Object.keys(scenarios).join(', ')}\nwrites ${path.relative(root, fixturesDir)}/<scenario>.ndjson`,
  );
  process.exit(0);
}
mkdirSync(fixturesDir, { recursive: true });
let failed = false;
for (const name of wanted.length > 0 ? wanted : Object.keys(scenarios)) {
  try {
    await record(name);
  } catch (error) {
    failed = true;
    console.error(`${name}: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  }
}
process.exitCode = failed ? 1 : 0;
