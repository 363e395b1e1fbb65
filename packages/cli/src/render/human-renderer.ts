import {
  type ChangedFile,
  type ApprovalRequest,
  type InputPart,
  type ProtocolEvent,
  type TokenUsage,
  describeContextCompaction,
  writeOutBidirectionalControls,
} from '@tether/protocol';
import { stripTerminalEscapes } from '@tether/provider-claude';
import { cliErrorMessage } from '../cli-error-message.js';
import { approvalSubject, questionAndOptions } from '../interactions/describe-interaction.js';
import { type TurnSummary, withRunUsage } from '../run-turn.js';
import { ProgressSpinner } from './progress-spinner.js';
import { diagnosticLine } from './diagnostic-words.js';

/** `: <what it would run>` for an approval that says, else nothing. */
function subjectOf(request: ApprovalRequest): string {
  const subject = approvalSubject(request);
  return subject === '' ? '' : `: ${subject}`;
}

export interface Output {
  write(text: string): void;
}

// Control characters left after the escapes are gone, except tab and newline; with the 8-bit (C1)
// ones, which some terminals act on as ESC sequences (U+009B is CSI, U+009D OSC). A carriage return
// goes too (a CRLF ends its line as LF): alone, it moves back to the line's start, so the text after
// it is drawn over the text before it, and a command shown for approval could hide what it runs.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is what this strips.
const controlCharacters = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Untrusted model text made inert before it reaches a terminal: control sequences stripped, bidi controls written out. */
export function terminalSafe(text: string): string {
  return writeOutBidirectionalControls(stripTerminalEscapes(text).replace(controlCharacters, ''));
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const unprintableCharacter = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A file name the agent chose (or a folder's path), for one entry of a list or line: as it is, or, when it holds a line break, a tab
 * or another control character, quoted with those written out ("a\nb.txt", as git quotes it). Stripped
 * like terminalSafe, a name with a line break would end its entry and could pass for the next one.
 */
export function fileNameOnOneLine(name: string): string {
  if (!unprintableCharacter.test(name)) return name;
  // JSON escapes the C0 controls but leaves DEL and the C1 ones (U+007F-U+009F) as they are: spelled out here.
  return JSON.stringify(name).replace(
    /[\u007f-\u009f]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function formatCost(costUsd: number | null): string {
  if (costUsd === null) return 'cost unknown';
  return `$${costUsd.toFixed(costUsd < 0.01 ? 4 : 2)}`;
}

export function formatUsage(usage: TokenUsage | null): string {
  if (!usage) return 'no usage reported';
  const cache =
    usage.cacheReadTokens + usage.cacheCreationTokens > 0
      ? ` (+${usage.cacheReadTokens} cache read, ${usage.cacheCreationTokens} cache write)`
      : '';
  return `${usage.inputTokens} in / ${usage.outputTokens} out tokens${cache} · ${formatCost(usage.costUsd)}`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A turn's images and file references in one line ("image/png 800×600 12.0 KB, file src/app.ts"); null when it has none. */
function describeAttachments(input: readonly InputPart[] | null): string | null {
  const attached = (input ?? []).flatMap((part) => {
    if (part.type === 'image')
      return [`${part.mediaType} ${part.width}×${part.height} ${formatBytes(part.byteLength)}`];
    if (part.type === 'file') return [`file ${fileNameOnOneLine(part.path)}`];
    return [];
  });
  return attached.length === 0 ? null : attached.join(', ');
}

/** A run's prompt in one line for `tether attach`: its text, or what stands for it (a control, a redacted input). */
function describePrompt(event: Extract<ProtocolEvent, { type: 'run.started' }>): string {
  if (event.control) return `/${terminalSafe(event.control.name)}`;
  if (event.startedBy === 'agent') return '(begun by the agent: a background task finished)';
  return describeInputText(event.input);
}

/** An input's text in one line (at most 200 characters), or what stands for it when it has none or is redacted. */
function describeInputText(input: readonly InputPart[] | null): string {
  if (input === null) return '(prompt redacted)';
  const text = input
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  const shown = text.length > 200 ? `${text.slice(0, 199)}…` : text;
  return terminalSafe(shown) || '(no text)';
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** A run's changed files in one line ("2 files changed: a.txt +3 −1, logo.png (binary)"). */
function describeChangedFiles(files: readonly ChangedFile[], truncated: boolean): string {
  if (files.length === 0) return 'no files changed';
  const shown = files.slice(0, 10).map((file) => {
    const name = file.previousPath
      ? `${fileNameOnOneLine(file.previousPath)} → ${fileNameOnOneLine(file.path)}`
      : fileNameOnOneLine(file.path);
    if (file.binary) return `${name} (binary)`;
    return `${name} +${file.added ?? 0} −${file.removed ?? 0}`;
  });
  const more = files.length > shown.length || truncated ? ', …' : '';
  return `${plural(files.length, 'file')}${truncated ? ' (at least)' : ''} changed: ${shown.join(', ')}${more}`;
}

/**
 * Renders a run for a person: the answer on stdout as it streams, progress and the summary on
 * stderr (so stdout stays just the answer when piped: nothing else is ever written there, not even
 * the line break that keeps a note off the answer's line on a terminal).
 */
export class HumanRenderer {
  private readonly stdout: Output;
  private readonly stderr: Output;
  /** Whether what stdout got so far ends a line (the summary ends the answer's last one there). */
  private answerEndsWithNewline = true;
  /** Whether a terminal showing both streams is in the middle of the answer's line (a note starts a new one). */
  private answerLineOpen = false;
  private wroteAnswer = false;
  /**
   * The run and content block of the answer's last text: text from another block (after a tool call,
   * or another run's) starts a line of its own, so `> answer.txt` never glues two blocks together.
   */
  private answerBlock: string | null = null;
  /**
   * The blocks of each run whose text went to stdout: a retry that abandons one of them (its model
   * call broke off mid-answer) cannot take that text back, so it says so.
   */
  private readonly shownBlocks = new Map<string, Set<string>>();

  /** Whether each run of the session is shown with its prompt and how it ended (`tether attach`). */
  private readonly showRuns: boolean;
  /** The token usage of each run so far, for its end line (showRuns only). */
  private readonly runUsage = new Map<string, TokenUsage>();
  /** The plan-limit hold last said for each queued input (a hold checked again is not said again). */
  private readonly heldUntil = new Map<string, string>();

  /**
   * A command's own turn (send, run), once accepted: its follow-up's input id (null for a turn that
   * is no follow-up). An input another caller steered into the same run is then said as theirs.
   * Undefined while following the whole session (attach), where no input is the reader's own.
   */
  private ownInput: string | null | undefined = undefined;

  /** Whether interaction prompts are shown by someone else (the terminal prompter). */
  private readonly promptsShownElsewhere: boolean;

  /** Shown on a terminal while the run is quiet (starting, thinking, running a tool, waiting for you). */
  private readonly spinner: ProgressSpinner | null;

  constructor(
    stdout: Output,
    stderr: Output,
    options: { promptsShownElsewhere?: boolean; spinner?: boolean; showRuns?: boolean } = {},
  ) {
    this.stdout = stdout;
    this.stderr = stderr;
    this.promptsShownElsewhere = options.promptsShownElsewhere ?? false;
    this.showRuns = options.showRuns ?? false;
    this.spinner = options.spinner ? new ProgressSpinner(stderr) : null;
  }

  /** The command's turn was accepted: `inputId` is its follow-up's (null when it is none). */
  turnAccepted(inputId: string | null): void {
    this.ownInput = inputId;
  }

  /** An input of the session that is not this command's turn, while rendering a command's own turn. */
  private othersInput(inputId: string): boolean {
    return this.ownInput !== undefined && this.ownInput !== inputId;
  }

  private note(text: string): void {
    this.spinner?.beforeOutput(true);
    // Off the answer's line on a terminal, by a line break on stderr: stdout is the answer's text only.
    const lineBreak = this.answerLineOpen ? '\n' : '';
    this.answerLineOpen = false;
    this.stderr.write(`${lineBreak}${text}\n`);
  }

  /** The state the spinner shows, from the run's events. */
  private track(event: ProtocolEvent): void {
    if (!this.spinner) return;
    if (event.type === 'run.started') this.spinner.setState('running');
    else if (event.type === 'run.thinking_delta') this.spinner.setState('thinking');
    else if (event.type === 'run.tool_activity')
      this.spinner.setState(event.status === 'invoked' ? `running ${terminalSafe(event.toolName)}` : 'running');
    else if (event.type === 'interaction.requested') {
      this.spinner.setState('waiting for you');
      if (this.promptsShownElsewhere) this.spinner.pause();
    } else if (
      event.type === 'interaction.settled' ||
      event.type === 'interaction.withdrawn' ||
      event.type === 'interaction.cancelled'
    ) {
      this.spinner.setState('running');
      this.spinner.resume();
    } else if (event.type === 'run.retrying') this.spinner.setState('retrying the API');
    else if (event.type === 'run.queued') this.spinner.setState('queued for a free process');
    else if (event.type === 'input.queued' && event.delivery === 'after_turn')
      this.spinner.setState('queued behind the running turn');
    else if (event.type === 'input.held') this.spinner.setState('held by the plan limit');
    else if (event.type === 'run.interrupt_requested') this.spinner.setState('stopping');
  }

  event(event: ProtocolEvent): void {
    this.track(event);
    switch (event.type) {
      case 'run.started': {
        if (this.showRuns) {
          this.endAnswerLine();
          this.note(`› ${describePrompt(event)}`);
        }
        const attachments = describeAttachments(event.input);
        if (attachments !== null) this.note(`  · with ${attachments}`);
        return;
      }
      case 'run.message_delta': {
        if (event.parentToolUseId !== undefined) return;
        const text = terminalSafe(event.text);
        if (text.length === 0) return;
        const block = `${event.runId} ${event.blockId}`;
        if (this.answerBlock !== null && this.answerBlock !== block) this.endAnswerLine();
        this.answerBlock = block;
        this.shownBlocks.set(event.runId, (this.shownBlocks.get(event.runId) ?? new Set()).add(event.blockId));
        this.spinner?.beforeOutput(text.endsWith('\n'));
        this.stdout.write(text);
        this.wroteAnswer = true;
        this.answerEndsWithNewline = text.endsWith('\n');
        this.answerLineOpen = !this.answerEndsWithNewline;
        return;
      }
      case 'run.tool_activity':
        if (event.parentToolUseId !== undefined) return;
        this.note(`  · ${terminalSafe(event.toolName)} ${event.status}`);
        return;
      case 'interaction.requested':
        if (this.promptsShownElsewhere) return;
        this.note(
          `  · waiting for an answer to ${event.request.kind === 'approval' ? `${terminalSafe(event.request.toolName)} (approval${subjectOf(event.request)})` : 'questions'}: ref ${event.interactionRef}`,
        );
        // What the answer must name (an answers file, the web UI, the API): the questions and their option labels.
        if (event.request.kind === 'question_set') {
          const { questions } = event.request;
          for (const [index, question] of questions.entries())
            for (const line of questionAndOptions(question, index, questions.length)) this.note(`    ${line}`);
        }
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
      case 'run.files_changed':
        this.note(`  · ${describeChangedFiles(event.files, event.truncated)}`);
        return;
      case 'diagnostic': {
        const line = diagnosticLine(event.level, event.code);
        if (line !== null) this.note(`  · ${line}`);
        return;
      }
      case 'input.queued':
        // Another caller's steer into this run: its answer is part of this run's, but not this command's input.
        if (this.othersInput(event.inputId)) {
          this.note(`  · another caller's input ${event.inputId} was steered into this turn`);
          return;
        }
        // Following the whole session (attach), a steer is a prompt no run.started will show: its text is said here.
        if (this.showRuns && event.delivery === 'steer') {
          this.note(`  › steered into the running turn (input ${event.inputId}): ${describeInputText(event.input)}`);
          return;
        }
        this.note(
          event.delivery === 'after_turn'
            ? `  · queued (input ${event.inputId}): it runs after the running turn and any queued before it; tether cancel-input withdraws it`
            : `  · sent into the running turn (input ${event.inputId})`,
        );
        return;
      case 'input.held':
        // The hold is checked again now and then: the same hold is said once.
        if (this.heldUntil.get(event.inputId) === event.until) return;
        this.heldUntil.set(event.inputId, event.until);
        this.note(
          `  · queued input ${event.inputId} held by the plan limit until ${event.until} (it starts then; tether cancel-input withdraws it)`,
        );
        return;
      case 'run.queued':
        // A terminal's spinner says it too; piped, this line is all there is to tell why nothing happens.
        this.note(
          `  · waiting for a free agent process (${event.position === 0 ? 'next in line' : `${event.position} ahead`})`,
        );
        return;
      case 'input.started':
        this.note(`  · queued input ${event.inputId} started`);
        return;
      case 'input.folded':
        if (this.othersInput(event.inputId)) {
          this.note(`  · another caller's input ${event.inputId} folded into this turn`);
          return;
        }
        this.note(`  · input ${event.inputId} folded into the running turn`);
        return;
      case 'input.cancelled':
        // Another caller's steer that ended unanswered changed nothing of this turn.
        if (this.othersInput(event.inputId)) return;
        this.note(`  · input ${event.inputId} cancelled (${event.reason.replaceAll('_', ' ')})`);
        return;
      case 'run.usage': {
        if (this.showRuns) this.runUsage.set(event.runId, withRunUsage(this.runUsage.get(event.runId) ?? null, event));
        return;
      }
      case 'run.completed': {
        // The call broke off and no retry followed: there is no answer after the text it cut.
        if (this.printedAny(event.runId, event.abandonedBlockIds))
          this.note('  · the text above was cut off when the call failed: it is not part of an answer');
        this.shownBlocks.delete(event.runId);
        if (!this.showRuns) return;
        this.endAnswerLine();
        this.writeOutcome(
          event.outcome,
          this.runUsage.get(event.runId) ?? null,
          event.error ?? null,
          `run ${event.runId}`,
          event.sessionId,
          event.runId,
        );
        this.runUsage.delete(event.runId);
        return;
      }
      case 'context.compacted':
        this.note(`  · ${describeContextCompaction(event)}`);
        return;
      // Someone else closed or reopened the session being followed: nothing runs while it is closed.
      case 'session.closed':
        if (!this.showRuns) return;
        this.endAnswerLine();
        this.note(`■ session ${event.sessionId} closed; still attached: it shows here again once reopened`);
        return;
      case 'session.opened':
        if (this.showRuns && event.reopened) this.note(`· session ${event.sessionId} reopened`);
        return;
      case 'run.retrying': {
        this.note(
          `  · the model API failed${event.httpStatus === null ? '' : ` (HTTP ${event.httpStatus})`}; retry ${event.attempt} of ${event.maxAttempts} in ${(event.delayMs / 1000).toFixed(1)} s`,
        );
        if (this.printedAny(event.runId, event.abandonedBlockIds))
          this.note(
            '  · the text above was cut off when the call failed: it is not part of the answer, which follows in full',
          );
        return;
      }
      default:
        return;
    }
  }

  /** Whether any of these blocks of the run had text printed (stdout cannot take it back). */
  private printedAny(runId: string, blockIds: readonly string[] | undefined): boolean {
    const shown = this.shownBlocks.get(runId);
    return blockIds?.some((blockId) => shown?.has(blockId)) ?? false;
  }

  /** Ends the answer's line on stdout, when text was written there and its line is still open. */
  private endAnswerLine(): void {
    if (!this.wroteAnswer || this.answerEndsWithNewline) return;
    this.spinner?.beforeOutput(true);
    this.stdout.write('\n');
    this.answerEndsWithNewline = true;
    this.answerLineOpen = false;
  }

  /** `✓ succeeded · 1200 in / 48 out tokens · $0.0058 · WHOSE` on stderr, and the error's line when there is one. */
  private writeOutcome(
    outcome: TurnSummary['outcome'],
    usage: TokenUsage | null,
    error: TurnSummary['error'],
    whose: string,
    sessionId: string,
    runId: string,
  ): void {
    const mark = outcome === 'succeeded' ? '✓' : outcome === 'interrupted' ? '■' : '✗';
    this.stderr.write(`${mark} ${outcome} · ${formatUsage(usage)} · ${whose}\n`);
    // Worded for the command line, as a refused command's error is (it may name API commands, and the run to rewind to).
    if (error) this.stderr.write(`  ${terminalSafe(cliErrorMessage(error, [sessionId, runId]))} [${error.code}]\n`);
  }

  summary(run: TurnSummary, sessionId: string): void {
    this.spinner?.stop();
    this.endAnswerLine();
    if (run.inputCancelled !== null) {
      // A spent budget is Tether's refusal, not the agent's: said as what it is.
      const why =
        run.error?.code === 'budget_exceeded'
          ? "the session's budget is spent"
          : run.inputCancelled.replaceAll('_', ' ');
      this.stderr.write(`■ not sent: the follow-up was cancelled (${why}) · session ${sessionId}\n`);
      if (run.error)
        this.stderr.write(`  ${terminalSafe(cliErrorMessage(run.error, [sessionId]))} [${run.error.code}]\n`);
      return;
    }
    this.writeOutcome(run.outcome, run.usage, run.error, `session ${sessionId}`, sessionId, run.runId);
  }
}
