import { existsSync } from 'node:fs';
import { textReply } from '@tether/fake-anthropic-api';
import { readProcessCommandLine } from '@tether/provider-claude/test-support';
import { agentErrorOf, answerText, processesWithEnvironment, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, turnRequests } from './conformance-harness.js';

describeTransports('configuration limits', ({ start, transport }) => {
  it('passes a system-prompt append to the model as text, never as a flag, and never on the command line', async () => {
    const environment = await start();
    environment.api.enqueue(textReply('Appended.'));
    const runtime = await environment.runtime();
    // The CLI scans its whole argv for "--agent-teams" before parsing: as an argument of its own, this text would switch agent teams on.
    const append = '--agent-teams';
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      appendSystemPrompt: append,
    });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
    expect(answerText(await runEvents(runtime, sessionId, runId))).toBe('Appended.');
    // Not on the command line, which every local user can read: the agent is still running now.
    const agents = processesWithEnvironment('HOME', environment.home);
    expect(agents).not.toEqual([]);
    for (const pid of agents) expect(readProcessCommandLine(pid)?.join(' ')).not.toContain(append);
    const body = turnRequests(environment)[0]!.body as {
      system: { text: string }[];
      tools: { name: string; input_schema: { properties: Record<string, unknown> } }[];
    };
    expect(body.system.map((block) => block.text).join('\n')).toContain(append);
    const agentTool = body.tools.find((tool) => tool.name === 'Agent');
    expect(Object.keys(agentTool!.input_schema.properties)).not.toContain('team_name');

    // cli: the private file it was read from is gone once claude has read it, while claude runs on (sdk: sent in initialize).
    const argv = agents.flatMap((pid) => readProcessCommandLine(pid) ?? []);
    const file = argv.find((argument) => argument.startsWith('--append-system-prompt-file='))?.split('=')[1];
    if (transport === 'cli') expect(file).toBeDefined();
    if (file) expect(existsSync(file)).toBe(false);
    environment.api.enqueue(textReply('Still appended.'));
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Still appended.');
    expect(processesWithEnvironment('HOME', environment.home)).toEqual(agents);
    const second = turnRequests(environment)[1]!.body as { system: { text: string }[] };
    expect(second.system.map((block) => block.text).join('\n')).toContain(append);
  });

  it('refuses inline settings JSON and an oversized environment before anything is recorded or started', async () => {
    const environment = await start();
    const runtime = await environment.runtime();
    const workspace = { kind: 'directory' as const, path: environment.workspace };
    const inline = await agentErrorOf(runtime.openSession({ workspace, settingsPath: '{"hooks":{"PreToolUse":[]}}' }));
    expect(inline.code).toBe('invalid_command');
    expect(inline.details).toMatchObject({ reason: 'inline_json' });
    const oversized = await agentErrorOf(
      runtime.openSession({ workspace, environment: { BLOB: 'x'.repeat(99_000), MORE: 'y'.repeat(2_000) } }),
    );
    expect(oversized.code).toBe('invalid_command');
    expect(oversized.details).toMatchObject({ reason: 'environment_too_large' });
    expect(oversized.message).toContain('environment');
    expect(await runtime.listSessions()).toEqual([]);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });
});
