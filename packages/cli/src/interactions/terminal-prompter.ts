import { emitKeypressEvents } from 'node:readline';
import { createInterface } from 'node:readline/promises';
import type { ApprovalRequest, InteractionAnswer, QuestionSetRequest } from '@tether/protocol';
import {
  type ApprovalChoice,
  approvalChoices,
  editableCommand,
  initialChoice,
  selectionAfterKey,
  type SelectionState,
} from './approval-choices.js';
import { describeApproval, describeQuestion } from './describe-interaction.js';
import type { Output } from '../render/human-renderer.js';
import { parseQuestionReply, retryHint } from './parse-question-reply.js';

/** Why a prompt was given up: it was answered elsewhere, withdrawn, or its run is over. */
export class PromptNoLongerAsked extends Error {
  constructor() {
    super('no longer asked');
  }
}

/** Asks a person at a terminal: a menu for approvals (arrows or numbers), typed replies for questions. */
export class TerminalPrompter {
  private readonly input: NodeJS.ReadStream;
  private readonly output: NodeJS.WriteStream;
  private queue: Promise<unknown> = Promise.resolve();
  /** A prompt is on screen: what else is printed meanwhile waits (it would throw the menu's redraw off). */
  private prompting = false;
  private held: { readonly output: Output; readonly text: string }[] = [];

  constructor(input: NodeJS.ReadStream, output: NodeJS.WriteStream) {
    this.input = input;
    this.output = output;
  }

  /**
   * `output` as the run's renderer should write to it: held while a prompt is on screen, then written
   * in order. A line printed under the menu (a parallel tool call's) moved it, and its redraw then
   * wrote over other lines and showed two choices selected.
   */
  heldWhilePrompting(output: Output): Output {
    return {
      write: (text) => {
        if (this.prompting) this.held.push({ output, text });
        else output.write(text);
      },
    };
  }

  /**
   * One prompt at a time, in the order they arrive. `signal` gives it up (answered elsewhere, withdrawn,
   * its run over): then it is taken off the terminal, or never shown, and the promise rejects with
   * PromptNoLongerAsked.
   */
  ask(request: ApprovalRequest | QuestionSetRequest, signal: AbortSignal): Promise<InteractionAnswer> {
    const next = this.queue.then(async () => {
      if (signal.aborted) throw new PromptNoLongerAsked();
      this.prompting = true;
      try {
        return request.kind === 'approval'
          ? await this.approve(request, signal)
          : await this.answerQuestions(request, signal);
      } catch (error) {
        if (!signal.aborted) throw error;
        this.write(['  (no longer asked: answered or withdrawn elsewhere, or the run ended)']);
        throw new PromptNoLongerAsked();
      } finally {
        this.prompting = false;
        const held = this.held;
        this.held = [];
        for (const { output, text } of held) output.write(text);
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private write(lines: string[]): void {
    this.output.write(`${lines.join('\n')}\n`);
  }

  private async approve(request: ApprovalRequest, signal: AbortSignal): Promise<InteractionAnswer> {
    this.write(['', ...describeApproval(request)]);
    const choices = approvalChoices(request);
    for (;;) {
      const choice = await this.choose(request, choices, signal);
      if (!choice.editCommand) return choice.answer;
      const edited = await this.editCommand(editableCommand(request) ?? '', signal);
      // An emptied line is a change of mind: back to the menu, nothing sent.
      if (edited !== null)
        return { decision: 'approve', scope: 'once', updatedInput: { ...request.input, command: edited } };
      this.write(['  (nothing edited: choose again)']);
    }
  }

  /** The command line to run instead, prefilled with the model's; null when left empty. */
  private async editCommand(command: string, signal: AbortSignal): Promise<string | null> {
    const lines = createInterface({ input: this.input, output: this.output, terminal: true });
    try {
      const reply = lines.question('  command › ', { signal });
      lines.write(command);
      const edited = (await reply).trim();
      return edited === '' ? null : edited;
    } finally {
      lines.close();
    }
  }

  private async choose(
    request: ApprovalRequest,
    choices: readonly ApprovalChoice[],
    signal: AbortSignal,
  ): Promise<ApprovalChoice> {
    const digits = !request.defaultToNo;
    let state: SelectionState = { index: initialChoice(request, choices), chosen: null };
    // A choice wider than the terminal wraps onto more rows: the redraw goes back over all of them and
    // clears below, or the copies it leaves show stale "›" marks.
    let drawnRows = 0;
    const render = (first: boolean) => {
      if (!first && drawnRows > 0) this.output.write(`\u001b[${drawnRows}A\u001b[J`);
      const width = Math.max(1, this.output.columns ?? 80);
      drawnRows = 0;
      choices.forEach((choice, index) => {
        const line = `  ${index === state.index ? '›' : ' '} ${digits ? `${index + 1}) ` : ''}${choice.label}`;
        this.output.write(`\u001b[2K${line}\n`);
        drawnRows += Math.max(1, Math.ceil(Array.from(line).length / width));
      });
    };
    // Raw mode first, so a key pressed while the menu is drawn is not echoed into it.
    emitKeypressEvents(this.input);
    const wasRaw = this.input.isRaw;
    this.input.setRawMode?.(true);
    this.input.resume();
    render(true);
    try {
      const chosen = await new Promise<number>((resolve, reject) => {
        const done = () => {
          this.input.off('keypress', onKey);
          signal.removeEventListener('abort', onOver);
        };
        const onOver = () => {
          done();
          reject(new PromptNoLongerAsked());
        };
        const onKey = (_text: string, key: { name?: string; sequence?: string; ctrl?: boolean }) => {
          if (key.ctrl && key.name === 'c') {
            // Raw mode swallows Ctrl-C; hand it to the same stop path as a signal.
            done();
            reject(new Error('interrupted'));
            process.kill(process.pid, 'SIGINT');
            return;
          }
          state = selectionAfterKey(state, key, choices.length, { digits });
          render(false);
          if (state.chosen !== null) {
            done();
            resolve(state.chosen);
          }
        };
        this.input.on('keypress', onKey);
        signal.addEventListener('abort', onOver, { once: true });
        if (signal.aborted) onOver();
      });
      return choices[chosen]!;
    } finally {
      this.input.setRawMode?.(wasRaw ?? false);
      this.input.pause();
    }
  }

  private async answerQuestions(request: QuestionSetRequest, signal: AbortSignal): Promise<InteractionAnswer> {
    const lines = createInterface({ input: this.input, output: this.output, terminal: true });
    try {
      const answers = [];
      for (const [index, question] of request.questions.entries()) {
        this.write(['', ...describeQuestion(question, index, request.questions.length)]);
        for (;;) {
          const answer = parseQuestionReply(question, await lines.question('  › ', { signal }));
          if (answer !== null) {
            answers.push(answer);
            break;
          }
          this.write([retryHint(question)]);
        }
      }
      return { decision: 'answer', answers };
    } finally {
      lines.close();
    }
  }
}
