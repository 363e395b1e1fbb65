import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { parseCliFrame } from '../frames/cli-frame-schemas.js';
import { translateFrame } from './translate-frame.js';
import { createTranslatorState, type TranslatorState } from './translator-state.js';

export function readNdjson(name: string): unknown[] {
  const file = fileURLToPath(new URL(`../__fixtures__/${name}`, import.meta.url));
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as unknown);
}

/**
 * Replays a recorded CLI transcript through the translator the way a session does: each user
 * line written to stdin becomes the active turn (run_1, run_2, …) once the previous one ended.
 */
export function replay(name: string, options: { providerSessionId?: string } = {}): AgentProviderV1Part[] {
  const sends = readNdjson(`${name}.stdin.ndjson`).filter((line) => (line as { type?: string }).type === 'user') as {
    uuid: string;
  }[];
  const state = createTranslatorState({
    providerSessionId: options.providerSessionId ?? null,
    reportedProviderSessionId: null,
    conversationEstablished: false,
  });
  const parts: AgentProviderV1Part[] = [];
  let next = 0;
  const startNext = () => {
    const send = sends[next];
    if (!send) return;
    next += 1;
    state.turn = { runId: `run_${next}`, uuid: send.uuid, started: false, toolsRunning: 0, interruptRequested: false };
  };
  startNext();
  for (const value of readNdjson(`${name}.ndjson`)) {
    const frame = parseCliFrame(value);
    parts.push(...translateFrame(state, frame));
    if (state.turn === null) startNext();
  }
  return parts;
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
