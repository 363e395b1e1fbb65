import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AgentProviderV1Part, AgentProviderV1Session } from '@tether/provider-spec';
import { createClaudeProvider } from '@tether/provider-claude';
import { fakeClaudeCliPath, fakeCliScript } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transports } from '../conformance/conformance-harness.js';

// A copy's first start that dies before the agent took the turn: the real binary does not die on
// demand, so a scripted stand-in does, and records how each process was launched.

let root: string;
let session: AgentProviderV1Session | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-fake-cli-copy-'));
});

afterEach(async () => {
  await session?.doStop('close');
  session = undefined;
  await rm(root, { recursive: true, force: true });
});

describe.each(transports)('a conversation copy whose first start fails [%s transport]', (transport) => {
  it('is made again, as a copy under a fresh id, in the process the turn is sent to next', async () => {
    const argvFile = path.join(root, 'argv.ndjson');
    const provider = createClaudeProvider({
      transport,
      claudePath: fakeClaudeCliPath(),
      environment: {
        PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
        HOME: root,
        TETHER_FAKE_CLI_ARGV_FILE: argvFile,
        // Every process exits at its first user line, before saying anything about it.
        ...fakeCliScript([[{ exit: 1 }]]),
      },
    });
    let complete: (part: AgentProviderV1Part) => void = () => undefined;
    const completed = new Promise<AgentProviderV1Part>((resolve) => {
      complete = resolve;
    });
    session = await provider.doOpenSession({
      sessionId: 'session-copy',
      workspace: { kind: 'directory', path: root },
      configuration: {},
      ephemeral: false,
      resumeProviderSessionId: null,
      copyConversation: { providerSessionId: 'source-conversation', afterMessageId: 'cut-entry' },
      emit: (part) => {
        if (part.type === 'run.completed') complete(part);
      },
    });
    await session.doTurn({ runId: 'run-1', input: [{ type: 'text', text: 'hello' }] });
    expect(await completed).toMatchObject({ outcome: 'failed', error: { code: 'provider_crashed' } });

    const launches = (await readFile(argvFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as string[]).join(' '));
    expect(launches).toHaveLength(2);
    // The cli transport passes `--flag value`, the Agent SDK `--flag=value` for some.
    for (const flags of launches) {
      expect(flags).toMatch(/--resume[ =]source-conversation/);
      expect(flags).toContain('--fork-session');
      expect(flags).toMatch(/--resume-session-at[ =]cut-entry/);
    }
    const copyIds = launches.map((flags) => /--session-id[ =](\S+)/.exec(flags)?.[1]);
    expect(copyIds[0]).toEqual(expect.any(String));
    expect(copyIds[1]).toEqual(expect.any(String));
    expect(copyIds[1]).not.toBe(copyIds[0]);
  });
});
