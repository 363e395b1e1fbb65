import { AgentError } from '@tether/protocol';
import type { ConnectionEnding, ConnectionListener } from '../connection/claude-connection.js';
import type { CliPermissionMode } from '../launch/permission-modes.js';
import type { Spare } from './warm-pool.js';

/** What a parked spare is claimed for: the session's folder and, when a claim can carry it, its mode. */
export interface SpareClaim {
  readonly cwd: string;
  readonly permissionMode: CliPermissionMode | undefined;
}

/** Why a claim failed, as a diagnostic-safe token (the CLI's reason, e.g. cwd_not_found; never its text). */
export type ClaimRefusal = {
  readonly reason: string;
  /** Set when the spare ended before answering (then its end is the reason). */
  readonly ending?: ConnectionEnding;
};

/**
 * The claim is answered within this long, or it counts as refused (the session then starts cold).
 * The outer bound: a spare that uses no CPU while its claim is out is refused sooner (`spare_not_responding`).
 */
const claimTimeoutMs = 30_000;

/** The refusal of a spare that made no progress on its claim (stopped, or deadlocked): it is hung. */
const spareNotRespondingReason = 'spare_not_responding';

/** The spare's own refusal of the claim (an error answer), not the request failing with the connection. */
function isClaimAnswer(error: unknown): boolean {
  return AgentError.isInstance(error) && error.code === 'provider_execution_error';
}

function reasonOf(error: unknown): string {
  const reason = AgentError.isInstance(error) ? error.details?.reason : undefined;
  return typeof reason === 'string' && /^[a-z0-9_]{1,50}$/.test(reason) ? reason : 'unknown';
}

/**
 * Claims a parked spare for a session and hands the spare's output to `listener` once the claim is
 * accepted. The caller writes its turn right after this returns, so the claim and the turn travel
 * together. Until the answer everything the spare says is held: the answer can arrive in the same
 * read as the turn's first frames, and on a refusal the spare answers the turn with a not_claimed
 * error result, which must never reach the session. A refusal (an error answer, no answer in time,
 * or the spare ending first) drops what was held and all that follows, and calls `onRefused` once;
 * the caller lets the spare go and starts the session cold. A spare that used no CPU over one look
 * while its claim is out (Spare.watchProgress) is refused then, not at the 30 s bound: answering a
 * claim takes tens of milliseconds of work, so one doing none is hung (SIGSTOPped, deadlocked).
 */
export function claimSpare(
  spare: Spare,
  claim: SpareClaim,
  listener: ConnectionListener,
  onRefused: (refusal: ClaimRefusal) => void,
): void {
  let state: 'claiming' | 'claimed' | 'refused' = 'claiming';
  let held: (() => void)[] = [];
  let stopWatching = (): void => undefined;
  let ending: ConnectionEnding | undefined;
  const pass = (deliver: () => void): void => {
    if (state === 'claimed') deliver();
    else if (state === 'claiming') held.push(deliver);
  };
  const refuse = (refusal: ClaimRefusal): void => {
    if (state !== 'claiming') return;
    state = 'refused';
    stopWatching();
    held = [];
    onRefused(refusal);
  };
  spare.adopt({
    onFrame: (frame) => pass(() => listener.onFrame(frame)),
    onNote: (code) => pass(() => listener.onNote(code)),
    onPrompt: (requestId, request) => pass(() => listener.onPrompt(requestId, request)),
    onPromptWithdrawn: (requestId) => pass(() => listener.onPromptWithdrawn(requestId)),
    onInputFailed: () => pass(() => listener.onInputFailed()),
    onEnd: (end) => {
      if (state === 'claimed') {
        listener.onEnd(end);
        return;
      }
      // A refusal can end the spare before its answer is read here (the sdk transport's Query ends on
      // it): the answer, already on its way, says why; without one the end is the reason.
      ending = end;
      setImmediate(() => refuse({ reason: 'spare_exited', ending: end }));
    },
  });
  spare.connection
    .request(
      {
        subtype: 'claim_session',
        cwd: claim.cwd,
        ...(claim.permissionMode === undefined ? {} : { permission_mode: claim.permissionMode }),
      },
      { timeoutMs: claimTimeoutMs },
    )
    .then(
      () => {
        if (state !== 'claiming') return;
        // Accepted by a spare already gone: nothing of it can serve the session.
        if (ending !== undefined) return refuse({ reason: 'spare_exited', ending });
        state = 'claimed';
        stopWatching();
        const pending = held;
        held = [];
        for (const deliver of pending) deliver();
      },
      (error: unknown) =>
        refuse(
          ending === undefined
            ? { reason: reasonOf(error) }
            : isClaimAnswer(error)
              ? { reason: reasonOf(error), ending }
              : { reason: 'spare_exited', ending },
        ),
    );
  // Looked at from the claim on: a parked spare idles until then, using no CPU, as it should.
  if (state === 'claiming') stopWatching = spare.watchProgress(() => refuse({ reason: spareNotRespondingReason }));
}
