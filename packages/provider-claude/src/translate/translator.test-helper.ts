import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { replayTranscript } from './replay-transcript.js';
import { createTranslatorState, type TranslatorState } from './translator-state.js';

export function readNdjson(name: string): unknown[] {
  const file = fileURLToPath(new URL(`../__fixtures__/${name}`, import.meta.url));
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as unknown);
}

/**
 * Replays a recorded CLI transcript (`<name>.ndjson`) through the translator the way a session does:
 * each user line written to stdin (`<name>.stdin.ndjson`) becomes the active turn (run_1, run_2, …).
 */
export function replay(name: string, options: { providerSessionId?: string } = {}): AgentProviderV1Part[] {
  const sends = readNdjson(`${name}.stdin.ndjson`).filter((line) => (line as { type?: string }).type === 'user') as {
    uuid: string;
  }[];
  return replayTranscript(readNdjson(`${name}.ndjson`), sends, options);
}

/** A process's translator with turn run_1 (input send-1) under way, of an established conversation. */
export function stateWithTurn(options: { toolInputDetail?: 'full' | 'none' } = {}): TranslatorState {
  const state = createTranslatorState({
    providerSessionId: 'conversation',
    reportedProviderSessionId: 'conversation',
    conversationEstablished: true,
    ...options,
  });
  state.turn = { runId: 'run_1', uuid: 'send-1', started: true, toolsRunning: 0, interruptRequested: false };
  return state;
}
