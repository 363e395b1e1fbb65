import { terminalSafe } from '../render/human-renderer.js';
import {
  type ApprovalRequest,
  type InteractionAnswer,
  describeSessionGrant,
  projectApprovalOffered,
  writeOutBidirectionalControls,
} from '@tether/protocol';

export interface ApprovalChoice {
  readonly label: string;
  readonly answer: InteractionAnswer;
  /** Ask for the command line first; the answer then approves once with it in place of the model's. */
  readonly editCommand?: true;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const controlCharacter = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/;

/** How a provider marks a string it shortened for display (`… [N more characters]`). */
const cutForDisplay = /… \[\d+ more characters\]$/;

/** The command an approval would run, when its input has one to edit (on one line, without control characters). */
export function editableCommand(request: ApprovalRequest): string | null {
  const command = request.input?.['command'];
  if (request.plan !== undefined || typeof command !== 'string') return null;
  // The one-line editor is prefilled by typing the command into it: a line break (a command of several
  // lines) or another control character would act as a key there, not be shown as the command's text.
  // A bidirectional control would reorder the line as it is edited (the menu shows it written out).
  if (controlCharacter.test(command) || writeOutBidirectionalControls(command) !== command) return null;
  // A command too long to be shown whole was cut for display: approving the cut text would run another command.
  return cutForDisplay.test(command) ? null : command;
}

/** The choices a person gets for an approval, in order; approve for the session or the project only when offered. */
export function approvalChoices(request: ApprovalRequest): ApprovalChoice[] {
  const choices: ApprovalChoice[] = [{ label: 'approve once', answer: { decision: 'approve', scope: 'once' } }];
  if (request.plan !== undefined) {
    choices.push({
      label: 'approve and continue with auto-accepted edits',
      answer: { decision: 'approve', continueInMode: 'auto_edit' },
    });
  }
  const grant = request.sessionGrant;
  if (request.offerSessionApproval)
    choices.push({
      label: `approve for this session${grant ? ` (${terminalSafe(describeSessionGrant(grant))})` : ''}`,
      answer: { decision: 'approve', scope: 'session' },
    });
  choices.push({ label: 'deny', answer: { decision: 'deny' } });
  choices.push({ label: 'deny and stop the run', answer: { decision: 'deny', interrupt: true } });
  if (editableCommand(request) !== null)
    choices.push({
      label: 'edit the command, then approve it once',
      answer: { decision: 'approve', scope: 'once' },
      editCommand: true,
    });
  // Last, away from the cursor's start: the one choice that outlives the session (rules only).
  if (projectApprovalOffered(request)) {
    choices.push({
      label: `always allow in this project${grant ? `: ${terminalSafe(grant.rules.join(', '))}` : ''} (writes .claude/settings.local.json)`,
      answer: { decision: 'approve', scope: 'local_settings' },
    });
  }
  return choices;
}

/** Where the cursor starts: never on approve when the agent says approve must not be pre-selected. */
export function initialChoice(request: ApprovalRequest, choices: readonly ApprovalChoice[]): number {
  if (!request.defaultToNo) return 0;
  return Math.max(
    0,
    choices.findIndex((choice) => choice.answer.decision === 'deny'),
  );
}

export interface SelectionState {
  readonly index: number;
  readonly chosen: number | null;
}

/**
 * One key press in a menu: arrows move, a digit picks (unless digits are off, as for prompts that
 * must not be approved by a stray keystroke), Enter confirms. Pure, so it is tested without a terminal.
 */
export function selectionAfterKey(
  state: SelectionState,
  key: { name?: string; sequence?: string },
  count: number,
  options: { digits: boolean } = { digits: true },
): SelectionState {
  if (key.name === 'up' || key.name === 'k') return { ...state, index: (state.index - 1 + count) % count };
  if (key.name === 'down' || key.name === 'j') return { ...state, index: (state.index + 1) % count };
  if (key.name === 'return' || key.name === 'enter') return { ...state, chosen: state.index };
  const digit =
    options.digits && key.sequence !== undefined && /^[1-9]$/.test(key.sequence) ? Number(key.sequence) - 1 : -1;
  if (digit >= 0 && digit < count) return { index: digit, chosen: digit };
  return state;
}
