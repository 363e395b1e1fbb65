import { AgentError, type InputCancelReason, type SerializedAgentError } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import type { ClaudeUserMessage } from '../connection/user-message.js';
import type { CliFrame } from '../frames/cli-frame-schemas.js';

/** A follow-up written into a running turn (doSteer) that has not reached the model yet. */
interface SteeredInput {
  readonly inputId: string;
  readonly runId: string;
  /** The uuid stamped on its user line: how the CLI names it (command_lifecycle, user_message_uuids). */
  readonly uuid: string;
  /** Its user line, written again to a process that takes the run over (one that never saw it). */
  readonly message: ClaudeUserMessage;
}

type CancelledPart = Extract<AgentProviderV1Part, { type: 'input.cancelled' }>;

const noParts: readonly AgentProviderV1Part[] = [];

/**
 * The steered inputs the agent holds and has not taken into the turn yet, and how each ends: folded
 * when the CLI starts it (lifecycle `started`: next to a tool's result, or as the turn it runs right
 * after the one it was sent into) or lists it in a result's user_message_uuids; cancelled when the
 * CLI drops it (lifecycle `cancelled`: an interrupt with cancel_queued, cancel_async_message) or the
 * run ends without it. Each gets exactly one part.
 */
export class SteeredInputs {
  /** In the order they were sent: the oldest runs first. */
  private readonly pending = new Map<string, SteeredInput>();
  /**
   * Uuids being withdrawn (cancel_async_message sent), with what their lifecycle `cancelled` reads:
   * withdrawn by the host, or interrupted by a stop that takes them back first.
   */
  private readonly withdrawing = new Map<string, 'withdrawn' | 'interrupted'>();
  /**
   * Uuids the CLI started (lifecycle `started`) whose turn has not reached the model yet: folded at
   * the model's first word after it; a budget spent meanwhile has the CLI cancel them instead, unsent.
   */
  private readonly starting = new Set<string>();

  add(input: SteeredInput): void {
    this.pending.set(input.uuid, input);
  }

  /** Forgets one that was never handed over (the write failed). */
  forget(uuid: string): void {
    this.pending.delete(uuid);
  }

  /** The lines of the run's pending inputs, oldest first. */
  pendingMessages(runId: string): ClaudeUserMessage[] {
    return [...this.pending.values()].filter((input) => input.runId === runId).map((input) => input.message);
  }

  uuidOf(inputId: string): string | undefined {
    for (const input of this.pending.values()) if (input.inputId === inputId) return input.uuid;
    return undefined;
  }

  /** The oldest steered input of the run the agent still holds. */
  oldestPending(runId: string): string | undefined {
    for (const input of this.pending.values()) if (input.runId === runId) return input.uuid;
    return undefined;
  }

  /** The uuids of the run's inputs the agent still holds, oldest first. */
  pendingOf(runId: string): string[] {
    return [...this.pending.values()].filter((input) => input.runId === runId).map((input) => input.uuid);
  }

  markWithdrawing(uuid: string, reason: 'withdrawn' | 'interrupted' = 'withdrawn'): void {
    this.withdrawing.set(uuid, reason);
  }

  /** Ends the withdrawal of `uuid`: its cancellation part when the agent dropped it and it is still pending. */
  withdrawn(uuid: string, dropped: boolean): CancelledPart | null {
    const reason = this.withdrawing.get(uuid) ?? 'withdrawn';
    this.withdrawing.delete(uuid);
    return dropped ? this.cancel(uuid, reason) : null;
  }

  /**
   * What a frame says about steered inputs. `interrupting`: a stop of the run is under way, so an
   * input the CLI cancels now was cancelled by it.
   */
  onFrame(frame: CliFrame, interrupting: boolean): readonly AgentProviderV1Part[] {
    // Nothing steered (nearly every frame of a turn): no array per frame.
    if (this.pending.size === 0) return noParts;
    if (frame.kind === 'command_lifecycle') {
      const uuid = frame.frame.command_uuid;
      if (frame.frame.state === 'started') {
        if (this.pending.has(uuid)) this.starting.add(uuid);
        return [];
      }
      if (frame.frame.state === 'completed') {
        const folded = this.fold(uuid);
        return folded ? [folded] : [];
      }
      if (frame.frame.state === 'cancelled') {
        const reason = this.withdrawing.get(uuid) ?? (interrupting ? 'interrupted' : 'agent_refused');
        const cancelled = this.cancel(uuid, reason, reason === 'agent_refused' ? droppedByAgent() : undefined);
        return cancelled ? [cancelled] : [];
      }
      return [];
    }
    // The model answers the request that carried them.
    if ((frame.kind === 'stream_event' || frame.kind === 'assistant') && this.starting.size > 0)
      return [...this.starting].flatMap((uuid) => this.fold(uuid) ?? []);
    // A turn's init names the lines it starts with: started, not yet sent (the budget may stop it first).
    if (frame.kind === 'system') {
      for (const uuid of frame.frame.user_message_uuids ?? []) if (this.pending.has(uuid)) this.starting.add(uuid);
      return [];
    }
    if (frame.kind === 'result') {
      const parts: AgentProviderV1Part[] = [];
      // A turn the spent budget stopped before its request went out names the lines it started with
      // all the same; they never reached the model. (A failed request did carry them: folded.)
      const unsent = frame.frame.subtype === 'error_max_budget_usd';
      for (const uuid of frame.frame.user_message_uuids ?? []) {
        if (unsent && this.starting.has(uuid)) continue;
        const folded = this.fold(uuid);
        if (folded) parts.push(folded);
      }
      return parts;
    }
    return [];
  }

  /** The run ends: every input still pending for it ends cancelled (before its run.completed). */
  endRun(runId: string, outcome: string, error: SerializedAgentError | undefined): CancelledPart[] {
    const parts: CancelledPart[] = [];
    for (const input of [...this.pending.values()]) {
      if (input.runId !== runId) continue;
      const part =
        outcome === 'interrupted'
          ? this.cancel(input.uuid, 'interrupted')
          : this.cancel(input.uuid, 'agent_refused', error ?? droppedByAgent());
      if (part) parts.push(part);
    }
    return parts;
  }

  private fold(uuid: string): AgentProviderV1Part | null {
    const input = this.pending.get(uuid);
    if (!input) return null;
    this.pending.delete(uuid);
    this.withdrawing.delete(uuid);
    this.starting.delete(uuid);
    return { type: 'input.folded', runId: input.runId, inputId: input.inputId };
  }

  private cancel(uuid: string, reason: InputCancelReason, error?: SerializedAgentError): CancelledPart | null {
    const input = this.pending.get(uuid);
    if (!input) return null;
    this.pending.delete(uuid);
    this.starting.delete(uuid);
    return {
      type: 'input.cancelled',
      runId: input.runId,
      inputId: input.inputId,
      reason,
      ...(error ? { error } : {}),
    };
  }
}

function droppedByAgent(): SerializedAgentError {
  return new AgentError({
    code: 'provider_rejected',
    message:
      'The claude CLI dropped this message before it reached the model (the run ended without it). Send it again as a new turn.',
    details: { reason: 'steer_dropped' },
  }).toObject();
}
