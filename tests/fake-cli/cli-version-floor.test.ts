import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CLAUDE_CLI_MINIMUM_VERSION, type ClaudeTransport, createClaudeProvider } from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import { answerText, fakeClaudeCliPath, fakeCliScript, fakeCliTurn, runEvents } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transports } from '../conformance/conformance-harness.js';

// A claude older than the supported floor is refused before anything is started, so a run on it
// fails clearly instead of misbehaving; updating the binary is all the next turn needs.

let root: string;
let runtime: AgentRuntime | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-version-floor-'));
});

afterEach(async () => {
  await runtime?.shutdown();
  runtime = undefined;
  await rm(root, { recursive: true, force: true });
});

/** A claude that reports `version` and otherwise behaves as the scripted fake CLI. */
async function claudeReporting(binary: string, version: string): Promise<void> {
  await writeFile(binary, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo '${version} (Claude Code)'; exit 0; fi\nexec '${process.execPath}' '${fakeClaudeCliPath()}' "$@"\n`);
  await chmod(binary, 0o755);
}

describe.each(transports)('the supported claude version floor [%s transport]', (transport) => {
  it('a run on a CLI older than the floor fails provider_unavailable (cli_too_old) and starts nothing; after an update the next turn runs', async () => {
    const binary = path.join(root, 'claude');
    await claudeReporting(binary, '2.0.5');
    const environment = { PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter), HOME: root, ...fakeCliScript([fakeCliTurn('updated')]) };
    runtime = await createAgentRuntime({ providers: [createClaudeProvider({ transport, claudePath: binary, environment })] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: root } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'hello' }] });
    const run = await runtime.waitForRun(first.runId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_unavailable', details: { reason: 'cli_too_old', binaryPath: binary, installedVersion: '2.0.5', minimumVersion: CLAUDE_CLI_MINIMUM_VERSION } },
    });
    expect(run.error?.message).toContain('claude update');
    expect((await runtime.readEvents(sessionId)).some((event) => event.type === 'session.process_started')).toBe(false);

    await claudeReporting(binary, CLAUDE_CLI_MINIMUM_VERSION);
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    expect(answerText(await runEvents(runtime, sessionId, second.runId))).toBe('updated');
  });
});
