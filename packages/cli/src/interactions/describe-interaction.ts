import type { ApprovalRequest, Question } from '@tether/protocol';
import { terminalSafe } from '../render/human-renderer.js';

const inputPreviewLength = 600;

function preview(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  const safe = terminalSafe(text ?? '');
  return safe.length > inputPreviewLength
    ? `${safe.slice(0, inputPreviewLength)}… (${safe.length - inputPreviewLength} more characters)`
    : safe;
}

/** A person-readable account of an approval: what the tool wants to do and why the agent asks. Model text is shown as text. */
export function describeApproval(request: ApprovalRequest): string[] {
  const title = request.title && request.title !== request.toolName ? `: ${terminalSafe(request.title)}` : '';
  const lines = [`? ${terminalSafe(request.toolName)} (${request.category}) wants to run${title}`];
  if (request.input) {
    const command = request.input.command ?? request.input.file_path ?? request.input.url;
    lines.push(
      ...preview(command ?? request.input)
        .split('\n')
        .map((line) => `    ${line}`),
    );
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
  return lines;
}

export function describeQuestion(question: Question, index: number, total: number): string[] {
  const lines = [
    `? ${total > 1 ? `(${index + 1}/${total}) ` : ''}${question.header ? `[${terminalSafe(question.header)}] ` : ''}${terminalSafe(question.question)}`,
  ];
  question.options.forEach((option, optionIndex) => {
    lines.push(
      `    ${optionIndex + 1}) ${terminalSafe(option.label)}${option.description ? ` — ${terminalSafe(option.description)}` : ''}`,
    );
  });
  lines.push(
    question.multiSelect
      ? '  numbers separated by commas, your own text, or empty to skip'
      : '  a number, your own text, or empty to skip',
  );
  return lines;
}
