import { AgentError, type EventOfType, type InteractionAnswer } from '@tether/protocol';
import type { TetherBackend } from '../tether-backend.js';
import type { Output } from '../render/human-renderer.js';
import { terminalSafe } from '../render/human-renderer.js';
import { readAnswerLines } from './answers-source.js';
import type { TerminalPrompter } from './terminal-prompter.js';

export type ResponderMode =
  | { readonly kind: 'terminal'; readonly prompter: TerminalPrompter }
  | { readonly kind: 'answers'; readonly source: string; readonly stdin: NodeJS.ReadableStream }
  | { readonly kind: 'allow-once' }
  /** Denies every prompt itself (when the agent runs in a daemon whose provider bridges prompts). */
  | { readonly kind: 'deny' };

/**
 * Answers the run's interactions the way `tether run` was told to: at the terminal, from an
 * answers stream, or by allowing each approval once (logged). Failures are reported, never fatal.
 */
export class InteractionResponder {
  private readonly runtime: TetherBackend;
  private readonly sessionId: string;
  private readonly mode: ResponderMode;
  private readonly stderr: Output;
  private stopReading: (() => void) | null = null;

  constructor(options: { runtime: TetherBackend; sessionId: string; mode: ResponderMode; stderr: Output }) {
    this.runtime = options.runtime;
    this.sessionId = options.sessionId;
    this.mode = options.mode;
    this.stderr = options.stderr;
    if (this.mode.kind === 'answers') {
      this.stopReading = readAnswerLines(this.mode.source, this.mode.stdin, (parsed) => {
        if (!parsed.ok) {
          this.stderr.write(
            `tether: ignored an --answers line (${parsed.problem}). Each line is {"ref": "...", "answer": {...}}.\n`,
          );
          return;
        }
        void this.send(parsed.line.ref, parsed.line.answer);
      });
    }
  }

  onRequested(event: EventOfType<'interaction.requested'>): void {
    const { interactionRef, request } = event;
    if (this.mode.kind === 'terminal') {
      this.mode.prompter.ask(request).then(
        (answer) => this.send(interactionRef, answer),
        () => undefined,
      );
      return;
    }
    if (this.mode.kind === 'deny') {
      void this.send(
        interactionRef,
        request.kind === 'approval'
          ? {
              decision: 'deny',
              message:
                'Nobody can answer prompts in this run (no terminal and no --answers), so this was not permitted.',
            }
          : { decision: 'decline' },
      );
      return;
    }
    if (this.mode.kind === 'allow-once') {
      if (request.kind === 'approval') {
        this.stderr.write(`  · allowed ${terminalSafe(request.toolName)} once (--approve allow-once)\n`);
        void this.send(interactionRef, { decision: 'approve', scope: 'once' });
      } else {
        this.stderr.write('  · declined a question set (--approve allow-once answers approvals only)\n');
        void this.send(interactionRef, { decision: 'decline' });
      }
    }
  }

  private async send(interactionRef: string, answer: InteractionAnswer): Promise<void> {
    try {
      await this.runtime.respondInteraction({ sessionId: this.sessionId, interactionRef, answer });
    } catch (error) {
      const message = AgentError.isInstance(error) ? `${error.message} [${error.code}]` : String(error);
      this.stderr.write(`tether: the answer was not accepted: ${message}\n`);
    }
  }

  close(): void {
    this.stopReading?.();
  }
}
