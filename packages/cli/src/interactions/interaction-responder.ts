import { AgentError, type EventOfType, type InteractionAnswer, type InteractionRequest } from '@tether/protocol';
import type { TetherBackend } from '../tether-backend.js';
import type { Output } from '../render/human-renderer.js';
import { terminalSafe } from '../render/human-renderer.js';
import { readAnswerLines } from './answers-source.js';
import { approvalSubject } from './describe-interaction.js';
import type { TerminalPrompter } from './terminal-prompter.js';

export type ResponderMode =
  | { readonly kind: 'terminal'; readonly prompter: TerminalPrompter }
  | { readonly kind: 'answers'; readonly source: string; readonly stdin: NodeJS.ReadableStream }
  | { readonly kind: 'allow-once' }
  /**
   * Denies every prompt itself (when the agent runs in a daemon whose provider bridges prompts):
   * `chosen` with --approve deny, otherwise because nobody can answer (no terminal, no --answers).
   */
  | { readonly kind: 'deny'; readonly chosen?: true }
  /** Answers none: a watcher with nobody to ask (`tether attach` piped) leaves them to whoever can answer. */
  | { readonly kind: 'watch' };

/**
 * Answers the run's interactions the way `tether run` was told to: at the terminal, from an
 * answers stream, or by allowing each approval once (logged). Failures are reported, never fatal.
 */
export class InteractionResponder {
  private readonly runtime: TetherBackend;
  private readonly sessionId: string;
  private readonly mode: ResponderMode;
  private readonly stderr: Output;
  private readonly onAnswersFailed: (() => void) | undefined;
  private stopReading: (() => void) | null = null;
  /** Prompts still waiting for an --answers line: denied if the source ends before one comes. */
  private readonly waiting = new Map<string, InteractionRequest>();
  /** Why no answer can come from --answers any more; null while one can. */
  private answersOver: 'ended' | 'unreadable' | null = null;
  private toldAnswersEnded = false;
  /** Prompts shown (or waiting to be) at the terminal: given up once answered elsewhere, or at the end. */
  private readonly asking = new Map<string, AbortController>();

  constructor(options: {
    runtime: TetherBackend;
    sessionId: string;
    mode: ResponderMode;
    stderr: Output;
    /** Told once --answers cannot be read (after saying so on stderr); without it, prompts are denied from then on. */
    onAnswersFailed?: () => void;
  }) {
    this.runtime = options.runtime;
    this.sessionId = options.sessionId;
    this.mode = options.mode;
    this.stderr = options.stderr;
    this.onAnswersFailed = options.onAnswersFailed;
    if (this.mode.kind === 'answers') {
      const source = this.mode.source === '-' ? 'stdin' : this.mode.source;
      this.stopReading = readAnswerLines(this.mode.source, this.mode.stdin, {
        line: (parsed) => {
          if (!parsed.ok) {
            this.stderr.write(
              `tether: ignored an --answers line (${parsed.problem}). Each line is {"ref": "...", "answer": {...}}.\n`,
            );
            return;
          }
          this.waiting.delete(parsed.line.ref);
          void this.send(parsed.line.ref, parsed.line.answer);
        },
        ended: () => this.noMoreAnswers('ended'),
        failed: (error) => {
          this.stderr.write(
            `tether: could not read --answers ${terminalSafe(source)} (${terminalSafe(error.message)}); ${this.onAnswersFailed ? 'stopping the run' : 'prompts are denied from now on'}.\n`,
          );
          this.noMoreAnswers('unreadable');
          this.onAnswersFailed?.();
        },
      });
    }
  }

  onRequested(event: EventOfType<'interaction.requested'>): void {
    const { interactionRef, request } = event;
    if (this.mode.kind === 'terminal') {
      if (this.asking.has(interactionRef)) return;
      const over = new AbortController();
      this.asking.set(interactionRef, over);
      this.mode.prompter.ask(request, over.signal).then(
        (answer) => {
          this.asking.delete(interactionRef);
          return this.send(interactionRef, answer);
        },
        () => this.asking.delete(interactionRef),
      );
      return;
    }
    if (this.mode.kind === 'answers') {
      if (this.answersOver === null) this.waiting.set(interactionRef, request);
      else this.denyUnanswerable(interactionRef, request);
      return;
    }
    if (this.mode.kind === 'watch') return;
    if (this.mode.kind === 'deny') {
      void this.send(
        interactionRef,
        this.mode.chosen
          ? denial(request, 'The user chose to deny every prompt of this run (--approve deny)')
          : denial(request, 'Nobody can answer prompts in this run (no terminal and no --answers)'),
      );
      return;
    }
    if (this.mode.kind === 'allow-once') {
      // Said as it is sent (before the tool's own lines), as an answer given: another may come first.
      if (request.kind === 'approval') {
        const subject = approvalSubject(request);
        this.stderr.write(
          `  · allowing ${terminalSafe(request.toolName)} once (--approve allow-once)${subject === '' ? '' : `: ${subject}`}\n`,
        );
        void this.send(interactionRef, { decision: 'approve', scope: 'once' });
      } else {
        this.stderr.write('  · declining a question set (--approve allow-once answers approvals only)\n');
        void this.send(interactionRef, { decision: 'decline' });
      }
    }
  }

  /** The interaction is over (settled, withdrawn, cancelled): nobody is to answer it any more. */
  onOver(interactionRef: string): void {
    this.waiting.delete(interactionRef);
    this.asking.get(interactionRef)?.abort();
  }

  /** Once --answers can give nothing more, prompts go as when nobody can answer: denied, not waited for forever. */
  private noMoreAnswers(why: 'ended' | 'unreadable'): void {
    this.answersOver = why;
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const [interactionRef, request] of waiting) this.denyUnanswerable(interactionRef, request);
  }

  private denyUnanswerable(interactionRef: string, request: InteractionRequest): void {
    if (this.answersOver === 'ended' && !this.toldAnswersEnded) {
      this.toldAnswersEnded = true;
      this.stderr.write(
        'tether: --answers has ended (nothing more can be read from it): tool prompts and questions will be denied.\n',
      );
    }
    const why = `Nobody can answer prompts in this run (${this.answersOver === 'ended' ? 'the --answers input has ended' : 'the --answers input cannot be read'})`;
    void this.send(interactionRef, denial(request, why));
  }

  private async send(interactionRef: string, answer: InteractionAnswer): Promise<void> {
    try {
      await this.runtime.respondInteraction({ sessionId: this.sessionId, interactionRef, answer });
    } catch (error) {
      if (AgentError.isInstance(error) && error.code === 'interaction_already_settled') {
        // Another client's answer, or the prompt's end, came first: this answer counts for nothing.
        this.stderr.write(`  · ${overBeforeTheAnswer(error.details?.reason)}: the answer given here did not count\n`);
        return;
      }
      const message = AgentError.isInstance(error) ? `${error.message} [${error.code}]` : String(error);
      this.stderr.write(`tether: the answer was not accepted: ${message}\n`);
    }
  }

  /** The run is over (or the watcher detaches): nothing is asked or read any more. */
  close(): void {
    this.stopReading?.();
    for (const over of this.asking.values()) over.abort();
  }
}

/** What the agent gets when a prompt is not put to anyone: an approval denied with the reason the model sees, a question set declined. */
function denial(request: InteractionRequest, why: string): InteractionAnswer {
  return request.kind === 'approval'
    ? { decision: 'deny', message: `${why}, so this was not permitted.` }
    : { decision: 'decline' };
}

/** Why a prompt took no answer from here, by the status it had (interaction_already_settled's reason). */
function overBeforeTheAnswer(status: string | undefined): string {
  if (status === 'withdrawn') return 'the agent withdrew the prompt first';
  if (status === 'cancelled' || status === undefined) return 'the prompt ended with its run first';
  return 'answered elsewhere first';
}
