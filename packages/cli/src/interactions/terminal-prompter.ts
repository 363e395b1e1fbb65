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
import { parseQuestionReply } from './parse-question-reply.js';

/** Asks a person at a terminal: a menu for approvals (arrows or numbers), typed replies for questions. */
export class TerminalPrompter {
  private readonly input: NodeJS.ReadStream;
  private readonly output: NodeJS.WriteStream;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(input: NodeJS.ReadStream, output: NodeJS.WriteStream) {
    this.input = input;
    this.output = output;
  }

  /** One prompt at a time, in the order they arrive. */
  ask(request: ApprovalRequest | QuestionSetRequest): Promise<InteractionAnswer> {
    const next = this.queue.then(() =>
      request.kind === 'approval' ? this.approve(request) : this.answerQuestions(request),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  private write(lines: string[]): void {
    this.output.write(`${lines.join('\n')}\n`);
  }

  private async approve(request: ApprovalRequest): Promise<InteractionAnswer> {
    this.write(['', ...describeApproval(request)]);
    const choices = approvalChoices(request);
    for (;;) {
      const choice = await this.choose(request, choices);
      if (!choice.editCommand) return choice.answer;
      const edited = await this.editCommand(editableCommand(request) ?? '');
      // An emptied line is a change of mind: back to the menu, nothing sent.
      if (edited !== null)
        return { decision: 'approve', scope: 'once', updatedInput: { ...request.input, command: edited } };
      this.write(['  (nothing edited: choose again)']);
    }
  }

  /** The command line to run instead, prefilled with the model's; null when left empty. */
  private async editCommand(command: string): Promise<string | null> {
    const lines = createInterface({ input: this.input, output: this.output, terminal: true });
    try {
      const reply = lines.question('  command › ');
      lines.write(command);
      const edited = (await reply).trim();
      return edited === '' ? null : edited;
    } finally {
      lines.close();
    }
  }

  private async choose(request: ApprovalRequest, choices: readonly ApprovalChoice[]): Promise<ApprovalChoice> {
    const digits = !request.defaultToNo;
    let state: SelectionState = { index: initialChoice(request, choices), chosen: null };
    const render = (first: boolean) => {
      if (!first) this.output.write(`\u001b[${choices.length}A`);
      choices.forEach((choice, index) =>
        this.output.write(
          `\u001b[2K  ${index === state.index ? '›' : ' '} ${digits ? `${index + 1}) ` : ''}${choice.label}\n`,
        ),
      );
    };
    // Raw mode first, so a key pressed while the menu is drawn is not echoed into it.
    emitKeypressEvents(this.input);
    const wasRaw = this.input.isRaw;
    this.input.setRawMode?.(true);
    this.input.resume();
    render(true);
    try {
      const chosen = await new Promise<number>((resolve, reject) => {
        const onKey = (_text: string, key: { name?: string; sequence?: string; ctrl?: boolean }) => {
          if (key.ctrl && key.name === 'c') {
            // Raw mode swallows Ctrl-C; hand it to the same stop path as a signal.
            this.input.off('keypress', onKey);
            reject(new Error('interrupted'));
            process.kill(process.pid, 'SIGINT');
            return;
          }
          state = selectionAfterKey(state, key, choices.length, { digits });
          render(false);
          if (state.chosen !== null) {
            this.input.off('keypress', onKey);
            resolve(state.chosen);
          }
        };
        this.input.on('keypress', onKey);
      });
      return choices[chosen]!;
    } finally {
      this.input.setRawMode?.(wasRaw ?? false);
      this.input.pause();
    }
  }

  private async answerQuestions(request: QuestionSetRequest): Promise<InteractionAnswer> {
    const lines = createInterface({ input: this.input, output: this.output, terminal: true });
    try {
      const answers = [];
      for (const [index, question] of request.questions.entries()) {
        this.write(['', ...describeQuestion(question, index, request.questions.length)]);
        answers.push(parseQuestionReply(question, await lines.question('  › ')));
      }
      return { decision: 'answer', answers };
    } finally {
      lines.close();
    }
  }
}
