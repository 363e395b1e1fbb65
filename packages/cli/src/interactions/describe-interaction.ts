import { type ApprovalRequest, type Question, foldBlankLineRuns } from '@tether/protocol';
import { terminalSafe } from '../render/human-renderer.js';

const inputPreviewLength = 600;
/** Of a longer text, its start and its end are shown: what a command does last (`&& rm …`) must not be hidden. */
const previewHeadLength = 400;
const previewTailLength = 200;

/** Of a text with many lines, the first and the last are shown: 80 newlines pushed a command off a 30-row screen. */
const previewHeadLines = 16;
const previewTailLines = 6;

function preview(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  const safe = terminalSafe(text ?? '');
  const cut =
    safe.length <= inputPreviewLength
      ? safe
      : `${safe.slice(0, previewHeadLength)}\n… (${safe.length - previewHeadLength - previewTailLength} characters not shown) …\n${safe.slice(-previewTailLength)}`;
  const lines = foldBlankLineRuns(cut.split('\n'));
  if (lines.length <= previewHeadLines + previewTailLines + 1) return lines.join('\n');
  const hidden = lines.length - previewHeadLines - previewTailLines;
  return [
    ...lines.slice(0, previewHeadLines),
    `… (${hidden} lines not shown) …`,
    ...lines.slice(-previewTailLines),
  ].join('\n');
}

function indented(text: string): string[] {
  return text.split('\n').map((line) => `    ${line}`);
}

/** What a file tool would write: Write's content, Edit's old and new text (the path alone says nothing of it). */
function fileChange(input: Record<string, unknown>): string[] {
  const lines: string[] = [];
  if (typeof input.content === 'string') lines.push('  content:', ...indented(preview(input.content)));
  if (typeof input.old_string === 'string') lines.push('  replacing:', ...indented(preview(input.old_string)));
  if (typeof input.new_string === 'string') lines.push('  with:', ...indented(preview(input.new_string)));
  if (Array.isArray(input.edits)) lines.push('  edits:', ...indented(preview(input.edits)));
  return lines;
}

/** A person-readable account of an approval: what the tool wants to do and why the agent asks. Model text is shown as text. */
export function describeApproval(request: ApprovalRequest): string[] {
  const title = request.title && request.title !== request.toolName ? `: ${terminalSafe(request.title)}` : '';
  const lines = [`? ${terminalSafe(request.toolName)} (${request.category}) wants to run${title}`];
  if (request.input) {
    const command = request.input.command ?? request.input.file_path ?? request.input.url;
    lines.push(...indented(preview(command ?? request.input)));
    if (command === request.input.file_path) lines.push(...fileChange(request.input));
  }
  if (request.plan)
    lines.push(
      ...preview(request.plan)
        .split('\n')
        .map((line) => `    ${line}`),
    );
  if (request.description && request.description !== request.title)
    lines.push(`  ${terminalSafe(request.description)}`);
  if (request.decisionReason) lines.push(`  reason: ${terminalSafe(request.decisionReason)}`);
  // Right above the choices, whatever scrolled away: what would run, on one line.
  const subject = approvalSubject(request);
  if (subject !== '' && lines.length > 3) lines.push(`  runs: ${subject}`);
  return lines;
}

export function describeQuestion(question: Question, index: number, total: number): string[] {
  const lines = questionAndOptions(question, index, total);
  lines.push(
    question.multiSelect
      ? '  numbers separated by commas, your own text, or empty to skip'
      : '  a number, your own text, or empty to skip',
  );
  return lines;
}

/**
 * The question and its numbered options (label — description), model text made terminal-safe: what an
 * answer names (an answers file gives the labels).
 */
export function questionAndOptions(question: Question, index: number, total: number): string[] {
  return [
    `? ${total > 1 ? `(${index + 1}/${total}) ` : ''}${question.header ? `[${terminalSafe(question.header)}] ` : ''}${terminalSafe(question.question)}`,
    ...question.options.map(
      (option, optionIndex) =>
        `    ${optionIndex + 1}) ${terminalSafe(option.label)}${option.description ? ` — ${terminalSafe(option.description)}` : ''}`,
    ),
  ];
}

/** What an approval would run or touch, on one line (its start and end when long): for a log line. */
export function approvalSubject(request: ApprovalRequest): string {
  const subject = request.input?.command ?? request.input?.file_path ?? request.input?.url;
  if (typeof subject !== 'string') return '';
  const line = terminalSafe(subject).replace(/\s+/g, ' ').trim();
  return line.length <= 200 ? line : `${line.slice(0, 140)} … ${line.slice(-50)}`;
}
