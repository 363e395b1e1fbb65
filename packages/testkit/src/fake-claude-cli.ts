import { fileURLToPath } from 'node:url';

/** One scripted step of the fake claude CLI (see scripts/fake-claude-cli.mjs). */
export type FakeCliStep =
  | { readonly line: object }
  /** Written `times` times (default once): an enormous line costs the script nothing. */
  | { readonly raw: string; readonly times?: number }
  | { readonly exit: number }
  | { readonly kill: NodeJS.Signals }
  /** Ignores that signal from then on (a wedged CLI that only SIGKILL ends). */
  | { readonly ignore: NodeJS.Signals }
  /** Stops reading and writing for good (a wedged CLI); only a signal ends it. With a file path: only while that file does not exist yet (it is created), so a later process of the same script goes on. */
  | { readonly hang: true | string }
  /** Plays `steps` only while that file does not exist yet (it is created): a later process of the same script skips them. */
  | { readonly once: string; readonly steps: readonly FakeCliStep[] }
  /** Closes its stdin (the host's next write fails with EPIPE), goes on with the remaining steps, then stays alive until signalled. */
  | { readonly closeStdin: true };

/** The path of the scripted fake claude CLI, usable as a provider's claudePath. */
export function fakeClaudeCliPath(): string {
  return fileURLToPath(new URL('../scripts/fake-claude-cli.mjs', import.meta.url));
}

/** The environment variable that carries the script: one list of steps per user line. */
export function fakeCliScript(turns: readonly (readonly FakeCliStep[])[]): Record<string, string> {
  return { TETHER_FAKE_CLI_SCRIPT: JSON.stringify(turns) };
}

/** How the scripted CLI answers a control request: a payload, then steps (e.g. the turn's result). */
export interface FakeCliControlAnswer {
  readonly response?: object;
  /** Answers with an error (subtype error, this text) instead of the response. */
  readonly error?: string;
  /** Steps written before the answer (e.g. a result that overtakes it). */
  readonly before?: readonly FakeCliStep[];
  readonly then?: readonly FakeCliStep[];
}

/** The environment variable that carries the control answers, keyed by subtype (a list answers successive requests). */
export function fakeCliControls(
  answers: Record<string, FakeCliControlAnswer | readonly FakeCliControlAnswer[]>,
): Record<string, string> {
  return { TETHER_FAKE_CLI_CONTROL: JSON.stringify(answers) };
}

/** A turn's result frame stamped with the user line's uuid. */
export function fakeCliResult(fields: Record<string, unknown> = {}): FakeCliStep {
  return {
    line: {
      type: 'result',
      subtype: 'success',
      is_error: false,
      session_id: '$SESSION',
      usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      user_message_uuid: '$UUID',
      user_message_uuids: ['$UUID'],
      ...fields,
    },
  };
}

/** The frames of an ordinary successful turn, stamped with the user line's uuid. */
export function fakeCliTurn(text: string): FakeCliStep[] {
  return [
    { line: { type: 'system', subtype: 'init', session_id: '$SESSION', user_message_uuids: ['$UUID'] } },
    {
      line: {
        type: 'stream_event',
        event: { type: 'message_start', message: { id: 'msg_fake' } },
        parent_tool_use_id: null,
      },
    },
    {
      line: {
        type: 'stream_event',
        event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
        parent_tool_use_id: null,
      },
    },
    {
      line: {
        type: 'result',
        subtype: 'success',
        is_error: false,
        session_id: '$SESSION',
        total_cost_usd: 0.001,
        usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
        user_message_uuid: '$UUID',
        user_message_uuids: ['$UUID'],
      },
    },
  ];
}
