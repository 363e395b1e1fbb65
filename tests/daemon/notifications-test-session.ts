import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { SubmitTurnReceipt } from '@tether/protocol';
import type { ClaudeTestEnvironment } from '@tether/testkit';
import { type Client, openSession } from './daemon-test-helpers.js';

/** A stand-in for the web UI's build (its directory added to `made`, for the caller to remove), so notifications carry an "open" link. */
export async function webDirectory(made: string[]): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tether-notify-web-'));
  made.push(root);
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, 'index.html'), '<!doctype html><title>Tether</title>');
  return root;
}

const approvalTurn = [
  toolUseReply('Bash', { command: 'echo hi > approved.txt', description: 'Write a file' }),
  textReply('Done.'),
] as const;

/** Opens a session and starts a run whose Bash call waits for an approval. */
export async function startApprovalRun(
  environment: ClaudeTestEnvironment,
  api: Client,
): Promise<{ sessionId: string; runId: string }> {
  const sessionId = await openSession(api, environment.workspace);
  environment.api.enqueue(...approvalTurn);
  const { runId } = await api.command<SubmitTurnReceipt>({
    type: 'submit_turn',
    sessionId,
    input: [{ type: 'text', text: 'Write it.' }],
  });
  return { sessionId, runId };
}

/** The daemon's /v1/metrics scrape. */
export async function metrics(daemon: { url: string; token: string }): Promise<string> {
  const response = await fetch(`${daemon.url}/v1/metrics`, { headers: { authorization: `Bearer ${daemon.token}` } });
  return response.text();
}
