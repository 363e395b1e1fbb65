import { useState } from 'react';
import { formatReset } from '../format/format-limits.js';
import type { FollowUp } from './conversation-state.js';

export interface WaitingFollowUpsProps {
  readonly followUps: readonly FollowUp[];
  /** Withdraws one (cancel_queued_input); resolves once the daemon answered, whatever it said. */
  readonly onWithdraw: (inputId: string) => Promise<void>;
}

/** Follow-ups sent while a run works and not yet taken up, oldest first, each withdrawable until then. */
export function WaitingFollowUps({ followUps, onWithdraw }: WaitingFollowUpsProps) {
  const [withdrawing, setWithdrawing] = useState<ReadonlySet<string>>(new Set());
  if (followUps.length === 0) return null;
  const withdraw = (inputId: string) => {
    setWithdrawing((current) => new Set(current).add(inputId));
    void onWithdraw(inputId).finally(() =>
      setWithdrawing((current) => {
        const next = new Set(current);
        next.delete(inputId);
        return next;
      }),
    );
  };
  return (
    <ol className="follow-ups" aria-label="Waiting follow-ups">
      {followUps.map((followUp) => (
        <li key={followUp.inputId} className={`follow-up follow-up-${followUp.delivery}`}>
          <span className="follow-up-state">
            {followUp.delivery === 'steer'
              ? 'Steering into the running turn'
              : followUp.heldUntil !== null
                ? `Held by the plan limit until ${formatReset(followUp.heldUntil)}`
                : 'Queued as the next turn'}
          </span>
          <span className="follow-up-text">{followUp.text === null ? '(input redacted)' : followUp.text}</span>
          <button
            type="button"
            className="follow-up-withdraw"
            aria-label={`Withdraw: ${followUp.text ?? 'the redacted follow-up'}`}
            disabled={withdrawing.has(followUp.inputId)}
            onClick={() => withdraw(followUp.inputId)}
          >
            Withdraw
          </button>
        </li>
      ))}
    </ol>
  );
}
