import { AgentError } from '@tether/protocol';

/** What session/new's `_meta` may ask of the session, as Claude's ACP adapter reads it. */
export interface RequestedSessionOptions {
  readonly model?: string;
  /** Checked by open_session (a whole number within its bounds), which refuses another. */
  readonly maxTurns?: number;
  /** Tool rules run without asking; checked by open_session as its own `allowedTools`. */
  readonly allowedTools?: string[];
  /** Text added to Claude Code's system prompt (`_meta.systemPrompt.append`). */
  readonly appendSystemPrompt?: string;
}

interface AdapterMeta {
  readonly claudeCode?: {
    readonly options?: { readonly model?: unknown; readonly maxTurns?: unknown; readonly allowedTools?: unknown };
  } | null;
  readonly systemPrompt?: unknown;
}

/**
 * The options a client sends the way Claude's ACP adapter takes them: `claudeCode.options.model`,
 * `maxTurns` and `allowedTools`, and `systemPrompt` beside them (acpx sends `--model`, `--max-turns`,
 * `--allowed-tools` and `--append-system-prompt` so). A system prompt that would replace Claude Code's
 * is refused (capability_unsupported) rather than dropped: the session would not be what was asked.
 * Anything else there, or of another type, is not Tether's to read.
 */
export function requestedSessionOptionsOf(meta: unknown): RequestedSessionOptions {
  const { claudeCode, systemPrompt } = (meta ?? {}) as AdapterMeta;
  const { model, maxTurns, allowedTools } = claudeCode?.options ?? {};
  return {
    ...(typeof model === 'string' && model.trim() !== '' ? { model: model.trim() } : {}),
    ...(typeof maxTurns === 'number' ? { maxTurns } : {}),
    ...(Array.isArray(allowedTools) && allowedTools.length > 0
      ? { allowedTools: allowedTools.filter((rule): rule is string => typeof rule === 'string') }
      : {}),
    ...appendedSystemPrompt(systemPrompt),
  };
}

function appendedSystemPrompt(systemPrompt: unknown): { appendSystemPrompt?: string } {
  if (typeof systemPrompt === 'string' && systemPrompt !== '') {
    throw new AgentError({
      code: 'capability_unsupported',
      message:
        "Tether adds to Claude Code's system prompt and does not replace it: send the text as _meta.systemPrompt.append (acpx: --append-system-prompt).",
      details: { reason: 'system_prompt_replacement' },
    });
  }
  const append = (systemPrompt as { append?: unknown } | null | undefined)?.append;
  return typeof append === 'string' && append !== '' ? { appendSystemPrompt: append } : {};
}
