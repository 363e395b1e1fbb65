import type { ProtocolEvent, TokenUsage } from '@tether/protocol';
import type { TurnSummary } from '../run-turn.js';

export interface Output {
  write(text: string): void;
}

/** Strips terminal control sequences from untrusted model text before it reaches a terminal. */
export function terminalSafe(text: string): string {
  return text.replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]|[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f]/g, '');
}

function formatCost(costUsd: number | null): string {
  if (costUsd === null) return 'cost unknown';
  return `$${costUsd.toFixed(costUsd < 0.01 ? 4 : 2)}`;
}

export function formatUsage(usage: TokenUsage | null): string {
  if (!usage) return 'no usage reported';
  const cache = usage.cacheReadTokens + usage.cacheCreationTokens > 0 ? ` (+${usage.cacheReadTokens} cache read, ${usage.cacheCreationTokens} cache write)` : '';
  return `${usage.inputTokens} in / ${usage.outputTokens} out tokens${cache} · ${formatCost(usage.costUsd)}`;
}

/**
 * Renders a run for a person: the answer on stdout as it streams, progress and the summary on
 * stderr (so stdout stays just the answer when piped).
 */
export class HumanRenderer {
  private readonly stdout: Output;
  private readonly stderr: Output;
  private endsWithNewline = true;
  private wroteAnswer = false;

  /** Whether interaction prompts are shown by someone else (the terminal prompter). */
  private readonly promptsShownElsewhere: boolean;

  constructor(stdout: Output, stderr: Output, options: { promptsShownElsewhere?: boolean } = {}) {
    this.stdout = stdout;
    this.stderr = stderr;
    this.promptsShownElsewhere = options.promptsShownElsewhere ?? false;
  }

  private note(text: string): void {
    if (!this.endsWithNewline) {
      this.stdout.write('\n');
      this.endsWithNewline = true;
    }
    this.stderr.write(`${text}\n`);
  }

  event(event: ProtocolEvent): void {
    switch (event.type) {
      case 'run.message_delta': {
        if (event.parentToolUseId !== undefined) return;
        const text = terminalSafe(event.text);
        if (text.length === 0) return;
        this.stdout.write(text);
        this.wroteAnswer = true;
        this.endsWithNewline = text.endsWith('\n');
        return;
      }
      case 'run.tool_activity':
        if (event.parentToolUseId !== undefined) return;
        this.note(`  · ${terminalSafe(event.toolName)} ${event.status}`);
        return;
      case 'interaction.requested':
        if (this.promptsShownElsewhere) return;
        this.note(`  · waiting for an answer to ${event.request.kind === 'approval' ? `${terminalSafe(event.request.toolName)} (approval)` : 'questions'}: ref ${event.interactionRef}`);
        return;
      case 'interaction.settled':
        this.note(`  · ${event.outcome}${event.by === 'policy' ? ' by policy' : ''}`);
        return;
      case 'interaction.withdrawn':
        this.note('  · the agent withdrew its request');
        return;
      case 'interaction.cancelled':
        this.note('  · request cancelled (the run ended)');
        return;
      case 'run.retrying':
        this.note(`  · the model API failed${event.httpStatus === null ? '' : ` (HTTP ${event.httpStatus})`}; retry ${event.attempt} of ${event.maxAttempts} in ${(event.delayMs / 1000).toFixed(1)} s`);
        return;
      default:
        return;
    }
  }

  summary(run: TurnSummary, sessionId: string): void {
    if (this.wroteAnswer && !this.endsWithNewline) {
      this.stdout.write('\n');
      this.endsWithNewline = true;
    }
    const mark = run.outcome === 'succeeded' ? '✓' : run.outcome === 'interrupted' ? '■' : '✗';
    this.stderr.write(`${mark} ${run.outcome} · ${formatUsage(run.usage)} · session ${sessionId}\n`);
    if (run.error) this.stderr.write(`  ${run.error.message} [${run.error.code}]\n`);
  }
}
