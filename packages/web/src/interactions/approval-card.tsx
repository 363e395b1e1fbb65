import { type KeyboardEvent, useRef, useState } from 'react';
import {
  type ApprovalRequest,
  type InteractionAnswer,
  type PermissionMode,
  describeSessionGrant,
  projectApprovalOffered,
  writeOutBidirectionalControls,
} from '@tether/protocol';
import { ApprovalEdit } from './approval-edit.js';
import { ApprovalInput } from './approval-input.js';
import { FailureNotice } from '../connection/failure-notice.js';
import { useAnswerSender } from './use-answer-sender.js';
import { useFocusOnArrival } from './use-focus-on-arrival.js';

const categoryLabels: Record<ApprovalRequest['category'], string> = {
  command: 'runs a command',
  file_read: 'reads files',
  file_write: 'changes files',
  network: 'uses the network',
  mcp: 'MCP tool',
  other: 'tool',
};

export interface ApprovalCardProps {
  readonly request: ApprovalRequest;
  /** Sends the answer; rejects with a sentence to show when it was refused. */
  readonly onAnswer: (answer: InteractionAnswer) => Promise<void>;
}

/** Modes a plan can be carried out in ('' = the one the agent picks). Plan and bypass are not offered: one is where it is, the other needs a restart. */
const continueModes: readonly { readonly value: '' | PermissionMode; readonly label: string }[] = [
  { value: '', label: 'as the agent chooses' },
  { value: 'ask_before_edit', label: 'asking before edits' },
  { value: 'auto_edit', label: 'accepting edits' },
  { value: 'auto', label: 'auto' },
  { value: 'dont_ask', label: 'without asking (denied unless allowed)' },
];

function isTyping(target: EventTarget): boolean {
  return (
    target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement
  );
}

/**
 * The agent asks to use a tool. The card shows exactly what it would do and the agent's reason;
 * it disappears when any client answers (first answer wins) or the agent withdraws it, because
 * it is drawn from the event stream, not from this page's own clicks.
 */
export function ApprovalCard({ request, onAnswer }: ApprovalCardProps) {
  const [message, setMessage] = useState('');
  const [editing, setEditing] = useState(false);
  const [continueIn, setContinueIn] = useState<'' | PermissionMode>('');
  const { sending, failure, send } = useAnswerSender(onAnswer);
  const isPlan = request.plan !== undefined;
  const editable = request.input !== null && !isPlan;
  const card = useRef<HTMLElement>(null);
  // Approve must not be one stray keystroke away when the agent says so.
  const approveByKey = !request.defaultToNo;

  useFocusOnArrival(card);

  const denyMessage = message.trim() === '' ? {} : { message: message.trim() };
  const approveOnce = () =>
    send({
      decision: 'approve',
      scope: 'once',
      ...(isPlan && continueIn !== '' ? { continueInMode: continueIn } : {}),
    });
  const approveEdited = (updatedInput: Record<string, unknown>) =>
    void send({ decision: 'approve', scope: 'once', updatedInput });
  const approveForSession = () => send({ decision: 'approve', scope: 'session' });
  const approveForProject = () => send({ decision: 'approve', scope: 'local_settings' });
  const deny = () => send({ decision: 'deny', ...denyMessage });
  const denyAndStop = () => send({ decision: 'deny', interrupt: true, ...denyMessage });

  const onKeyDown = (event: KeyboardEvent<HTMLElement>) => {
    if (sending || editing || event.altKey || event.ctrlKey || event.metaKey || isTyping(event.target)) return;
    const key = event.key.toLowerCase();
    const action =
      key === 'a' && approveByKey
        ? approveOnce
        : key === 's' && approveByKey && request.offerSessionApproval
          ? approveForSession
          : key === 'd'
            ? deny
            : key === 'x'
              ? denyAndStop
              : null;
    if (action === null) return;
    event.preventDefault();
    void action();
  };

  const title = `${request.toolName} ${categoryLabels[request.category]}`;
  // The CLI often repeats the tool's own description as its prompt text: show it once.
  const inputDescription =
    typeof request.input?.['description'] === 'string' ? request.input['description'] : undefined;
  return (
    <section
      className="card approval-card"
      aria-label={`Approval: ${request.toolName}`}
      tabIndex={-1}
      ref={card}
      onKeyDown={onKeyDown}
    >
      <h3 className="card-title">
        {request.plan !== undefined ? 'The agent proposes a plan' : title}
        <span className="category-badge">{request.category.replace('_', ' ')}</span>
      </h3>
      {request.title && request.title !== request.toolName ? (
        <p className="approval-cli-title">{writeOutBidirectionalControls(request.title)}</p>
      ) : null}
      {request.description && request.description !== inputDescription ? (
        <p>{writeOutBidirectionalControls(request.description)}</p>
      ) : null}
      {request.decisionReason ? (
        <p className="approval-reason">
          <span className="muted">Why it asks: </span>
          {writeOutBidirectionalControls(request.decisionReason)}
        </p>
      ) : null}
      {request.blockedPath ? (
        <p className="approval-path">
          <span className="muted">Blocked path </span>
          <code>{writeOutBidirectionalControls(request.blockedPath)}</code>
        </p>
      ) : null}
      <ApprovalInput request={request} />
      {request.defaultToNo ? (
        <p className="muted">The agent asks that approval is not pre-selected: approve with the button.</p>
      ) : null}
      {isPlan ? (
        <label className="approval-continue">
          Carry it out{' '}
          <select
            aria-label="Mode to carry out the plan in"
            value={continueIn}
            disabled={sending}
            onChange={(event) => setContinueIn(event.target.value as '' | PermissionMode)}
          >
            {continueModes.map((mode) => (
              <option key={mode.value} value={mode.value}>
                {mode.label}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {editing && request.input !== null ? (
        <ApprovalEdit
          input={request.input}
          sending={sending}
          onApprove={approveEdited}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      {request.offerSessionApproval && request.sessionGrant && !editing ? (
        // What "for session" grants, in the agent's words (shown as text): a rule, or a mode for every later edit.
        <p className="approval-grant">
          For the session: {writeOutBidirectionalControls(describeSessionGrant(request.sessionGrant))}
        </p>
      ) : null}
      {editing ? null : (
        <div className="card-actions">
          <button
            type="button"
            className="button-approve"
            disabled={sending}
            aria-label="Approve once"
            aria-keyshortcuts={approveByKey ? 'A' : undefined}
            onClick={() => void approveOnce()}
          >
            Approve once{approveByKey ? <kbd>A</kbd> : null}
          </button>
          {request.offerSessionApproval ? (
            <button
              type="button"
              disabled={sending}
              aria-label="Approve for session"
              title="Approve this and the same again for the rest of this session"
              aria-keyshortcuts={approveByKey ? 'S' : undefined}
              onClick={() => void approveForSession()}
            >
              Approve for session{approveByKey ? <kbd>S</kbd> : null}
            </button>
          ) : null}
          {projectApprovalOffered(request) ? (
            // No shortcut: this one outlives the session (a rule in the project's .claude/settings.local.json).
            <button
              type="button"
              disabled={sending}
              title="Writes the rule to .claude/settings.local.json in the workspace"
              onClick={() => void approveForProject()}
            >
              Always allow in project
            </button>
          ) : null}
          {editable ? (
            <button
              type="button"
              disabled={sending}
              aria-label="Edit the input before approving"
              onClick={() => setEditing(true)}
            >
              Edit…
            </button>
          ) : null}
        </div>
      )}
      <div className="card-actions">
        <input
          className="deny-message"
          type="text"
          aria-label="Message to the agent when denying (optional)"
          placeholder="Why not? (optional)"
          value={message}
          maxLength={2000}
          onChange={(event) => setMessage(event.target.value)}
          onKeyDown={(event) => {
            // As in a question's own-words field: Enter sends, here the denial with its message.
            if (event.key !== 'Enter' || event.nativeEvent.isComposing || sending) return;
            event.preventDefault();
            void deny();
          }}
        />
        <button
          type="button"
          className="button-deny"
          disabled={sending}
          aria-label="Deny"
          aria-keyshortcuts="D"
          onClick={() => void deny()}
        >
          Deny<kbd>D</kbd>
        </button>
        <button
          type="button"
          className="button-deny"
          disabled={sending}
          aria-label="Deny and stop the run"
          aria-keyshortcuts="X"
          onClick={() => void denyAndStop()}
        >
          Deny and stop<kbd>X</kbd>
        </button>
      </div>
      <FailureNotice failure={failure} />
    </section>
  );
}
