import { textReply } from '@tether/fake-anthropic-api';
import type { ClaudeTransport } from '@tether/provider-claude';
import { createClaudeTestEnvironment, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { transports } from './conformance-harness.js';

interface TurnRequest {
  readonly tools: string[];
  readonly system: string;
  readonly model: string;
  readonly keys: string[];
  readonly prompt: string;
  readonly userAgent: string;
}

/** One turn through a transport; what the model was sent, with per-session values blanked. */
async function firstRequest(transport: ClaudeTransport): Promise<TurnRequest> {
  const environment = await createClaudeTestEnvironment({ transport });
  try {
    environment.api.enqueue(textReply('Same for both.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      appendSystemPrompt: 'Tether parity marker.',
    });
    await runEvents(
      runtime,
      sessionId,
      (await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Compare me.' }] })).runId,
    );
    const [request] = environment.api.requests.filter((entry) => entry.kind === 'turn');
    const body = request!.body as {
      tools: { name: string }[];
      system: { text: string }[];
      model: string;
      messages: { content: unknown }[];
    } & Record<string, unknown>;
    // The CLI names its project directory after the workspace path, "/" → "-".
    const blank = (text: string) =>
      text
        .replaceAll(environment.workspace.replaceAll('/', '-'), '<project>')
        .replaceAll(environment.workspace, '<workspace>')
        .replaceAll(environment.home, '<home>')
        .replace(/cc_entrypoint=[\w-]+/, 'cc_entrypoint=<entrypoint>')
        .replace(/cch=[0-9a-f]+/, 'cch=<hash>');
    return {
      tools: body.tools.map((tool) => tool.name),
      system: blank(body.system.map((block) => block.text).join('\n')),
      model: body.model,
      keys: Object.keys(body).sort(),
      prompt: blank(JSON.stringify(body.messages[0]?.content)),
      userAgent: String(request!.headers['user-agent'] ?? ''),
    };
  } finally {
    await environment.cleanup();
  }
}

it('the model is sent the same tools, system prompt (with the append) and first message through both transports', async () => {
  const [cli, sdk] = await Promise.all(transports.map((transport) => firstRequest(transport)));
  expect(sdk!.tools).toEqual(cli!.tools);
  expect(cli!.tools).toContain('AskUserQuestion');
  expect(sdk!.system).toEqual(cli!.system);
  expect(cli!.system).toContain('Tether parity marker.');
  expect(sdk!.model).toBe(cli!.model);
  expect(sdk!.keys).toEqual(cli!.keys);
  expect(sdk!.prompt).toEqual(cli!.prompt);
  // What tells them apart on the wire: the SDK's entrypoint in the user agent.
  expect(cli!.userAgent).toContain('sdk-cli');
  expect(sdk!.userAgent).toContain('sdk-ts');
});
