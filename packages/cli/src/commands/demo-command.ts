import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type FakeRequestView,
  startFakeAnthropicApi,
  textReply,
  thinkingReply,
  toolUseReply,
} from '@tether/fake-anthropic-api';
import { createClaudeProvider } from '@tether/provider-claude';
import { type AgentRuntime, type ShutdownSignal, createAgentRuntime, signalExitCode } from '@tether/runtime';
import { openSqliteStore, resolveGivenPath } from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { HumanRenderer } from '../render/human-renderer.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { exitCodeForRun, runTurn } from '../run-turn.js';
import { parseTransport } from './transport-option.js';
import { signalDeadlineMs, signalGraceMs } from './turn-driver.js';
import { parseCommandLine } from './parse-command-line.js';

export const demoUsage = `usage: tether demo [--json] [--claude-path PATH] [--transport cli|sdk]

Runs a short scripted conversation through the real claude CLI against Tether's built-in fake
model on 127.0.0.1: no account, no network. Everything it creates is removed afterwards.
--transport sdk runs the same conversation through the Agent SDK's query() (docs/providers.md).`;

const demoFileText = 'Hello from the Tether demo workspace. The claude CLI read this file with its own Read tool.';

const prompts = ['Introduce yourself in one sentence.', 'What does hello.txt say?'] as const;

/** The fake model's script: an introduction, then a real Read tool call and an answer from its result. */
function demoResponder(workspace: string) {
  return (request: FakeRequestView) => {
    const toolResult = request.toolResults[0];
    if (toolResult) {
      const fileLine = toolResult.content.split('\n').find((line) => line.includes('Hello from')) ?? toolResult.content;
      const quoted = fileLine.replace(/^\s*\d+[\t→]/, '').trim();
      return textReply(`The file says: "${quoted}"`, { chunks: 8, usage: { inputTokens: 1800, outputTokens: 24 } });
    }
    if (request.lastUserText.includes('hello.txt')) {
      return toolUseReply(
        'Read',
        { file_path: path.join(workspace, 'hello.txt') },
        { text: 'Let me read it.', usage: { inputTokens: 1500, outputTokens: 30 } },
      );
    }
    return thinkingReply(
      'The user wants a one-sentence introduction.',
      "Hello! I am Tether's built-in fake model, but the claude CLI you are watching is real: Tether started it, streamed this answer through its durable event log, and will keep the conversation for the next turn.",
      { chunks: 12, usage: { inputTokens: 1200, outputTokens: 48 } },
    );
  };
}

/** The signal that ends the demo, once one came, and the runtime it stops once there is one. */
interface DemoStop {
  ending: ShutdownSignal | null;
  runtime: AgentRuntime | null;
}

/** `tether demo`: Tether's main job end to end, with the built-in fake model. */
export async function demoCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseCommandLine(
    argv,
    {
      options: {
        json: { type: 'boolean', default: false },
        'claude-path': { type: 'string' },
        transport: { type: 'string' },
      },
    },
    demoUsage,
  );
  const json = values.json ?? false;
  const transport = parseTransport(values.transport);
  // Any signal ends the demo like tether run's SIGTERM: the run is stopped, the agent killed after
  // the grace (at once on a second signal), everything removed, exit 128 + the signal. Listened to
  // before anything is made: a signal while the demo starts removes what it made too.
  const stop: DemoStop = { ending: null, runtime: null };
  const removeInterrupt = context.onInterrupt((count, signal) => {
    stop.ending ??= signal;
    context.exitAfter(signalDeadlineMs, signalExitCode(stop.ending));
    void stop.runtime?.shutdown({ graceMs: count === 1 ? signalGraceMs : 0, force: true });
  });
  let root: string | undefined;
  try {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-demo-')));
    return await runDemo(root, { json, transport, claudePathOption: values['claude-path'] }, context, stop);
  } finally {
    removeInterrupt();
    if (root !== undefined) await rm(root, { recursive: true, force: true });
    // The demo's session went with its data dir: said here, not left to the run's advice to go on with it.
    if (stop.ending !== null && !json)
      context.stderr.write(`Demo stopped (${stop.ending}); everything it made is removed.\n`);
  }
}

async function runDemo(
  root: string,
  options: { json: boolean; transport: ReturnType<typeof parseTransport>; claudePathOption: string | undefined },
  context: CliContext,
  stop: DemoStop,
): Promise<number> {
  const { json, transport } = options;
  const home = path.join(root, 'home');
  const workspace = path.join(root, 'workspace');
  const temporary = path.join(root, 'tmp');
  await Promise.all([mkdir(home), mkdir(workspace), mkdir(temporary)]);
  await writeFile(path.join(workspace, 'hello.txt'), `${demoFileText}\n`);
  const api = await startFakeAnthropicApi({ responder: demoResponder(workspace) });
  try {
    // The child's whole environment is built here: the demo must not pick up a real key or login.
    const environment: Record<string, string> = {
      PATH: context.environment.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      LANG: 'C.UTF-8',
      SHELL: '/bin/sh',
      TMPDIR: temporary,
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: 'tether-demo-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...(context.environment.TETHER_CLAUDE_PATH ? { TETHER_CLAUDE_PATH: context.environment.TETHER_CLAUDE_PATH } : {}),
    };
    const claudePath =
      options.claudePathOption === undefined ? undefined : resolveGivenPath(options.claudePathOption, context.cwd);
    const provider = createClaudeProvider({ transport, environment, ...(claudePath ? { claudePath } : {}) });
    const availability = await provider.doProbe();
    if (stop.ending !== null) return signalExitCode(stop.ending);
    if (!availability.available) {
      context.stderr.write(`tether demo: ${availability.problem?.message ?? 'the claude CLI is not available.'}\n`);
      return 1;
    }
    const store = await openSqliteStore({ dataDir: path.join(root, 'data') });
    const runtime = await createAgentRuntime({ providers: [provider], store });
    stop.runtime = runtime;
    try {
      if (stop.ending !== null) return signalExitCode(stop.ending);
      const renderer = json ? new JsonRenderer(context.stdout) : new HumanRenderer(context.stdout, context.stderr);
      if (!json) {
        const via = transport === 'sdk' ? " through the Agent SDK's query()" : '';
        context.stderr.write(
          `Tether demo: the real claude CLI ${availability.version ?? ''} (${availability.binaryPath})${via} against the built-in fake model at ${api.url}. No account, no network.\n`,
        );
      }
      const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
      let afterSeq = 0;
      for (const prompt of prompts) {
        if (!json) context.stderr.write(`\n› ${prompt}\n`);
        const run = await runTurn(runtime, { sessionId, prompt, afterSeq, sink: renderer });
        // Stopped by a signal, the run's error would advise going on with a session about to be removed.
        if (renderer instanceof HumanRenderer)
          renderer.summary(stop.ending === null ? run : { ...run, error: null }, sessionId);
        if (stop.ending !== null) return signalExitCode(stop.ending);
        if (run.outcome !== 'succeeded') return exitCodeForRun(run);
        afterSeq = (await runtime.getSession(sessionId)).lastSeq;
      }
      await runtime.closeSession({ sessionId });
      if (!json) {
        // In a checkout, `tether` is not on PATH: the hint says the command that works there.
        const tether =
          existsSync(path.join(context.cwd, 'dev')) && existsSync(path.join(context.cwd, 'packages', 'cli'))
            ? './dev npx tether'
            : 'tether';
        context.stderr.write(
          `\nDone: two turns, one tool call, one conversation. With a real key, try: ${tether} run "explain this repository"\n`,
        );
      }
      return 0;
    } catch (error) {
      // The runtime shut down under a command: the signal decides the code.
      if (stop.ending !== null) return signalExitCode(stop.ending);
      throw error;
    } finally {
      await runtime.shutdown();
    }
  } finally {
    await api.close();
  }
}
