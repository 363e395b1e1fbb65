import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { AgentError, type InteractionAnswer, type PermissionMode, newCommandId } from '@tether/protocol';
import { Composer } from '../composer/composer.js';
import { ControlsMenu } from '../composer/controls-menu.js';
import { useDaemon } from '../connection/daemon-context.js';
import { describeFailure, isTokenRefused } from '../connection/describe-failure.js';
import { formatCost, formatTokens, permissionModeLabels } from '../format/format-values.js';
import { modeLabel, modelLabel } from '../sessions/session-settings.js';
import { ApprovalCard } from '../interactions/approval-card.js';
import { QuestionCard } from '../interactions/question-card.js';
import { formatContextUsage, formatPlanLimits } from '../format/format-limits.js';
import {
  type RunEntry,
  activeRun,
  canForkAt,
  canRestoreFilesOf,
  canRewindTo,
  openInteractions,
  waitingFollowUps,
} from './conversation-state.js';
import { WaitingFollowUps } from './waiting-follow-ups.js';
import { ForkOriginLine, InheritedTurns, useForkSource } from './fork-origin.js';
import { ForkLinks, RunView } from './run-view.js';
import type { TurnActionsProps } from './turn-actions.js';
import { SessionActions } from './session-actions.js';
import { useFocusKeptIn } from '../focus/use-focus-kept-in.js';
import { SessionMissing } from './session-missing.js';
import { useConversation } from './use-conversation.js';
import { useSessionSettings } from './use-session-settings.js';
import { sessionDiffPath } from '../routing/use-route.js';
import { useWorkspaceStatus } from '../workspace/use-workspace-status.js';
import { WorkspaceLine } from '../workspace/workspace-line.js';
import { afterDeleteNotice, keptWork } from '../workspace/workspace-summary.js';

/** One session, live: the conversation as it streams, open prompts to answer, and the composer. */
export interface SessionViewProps {
  readonly sessionId: string;
  readonly onStateChange: () => void;
  /**
   * Leave the view for the session list: the session was deleted (here: `notice` says what became of
   * its worktree), or the daemon has none by this id.
   */
  readonly onLeave: (notice?: string) => void;
  /** Go to another session (a fork made here, or the one this was forked from). */
  readonly onOpenSession: (sessionId: string) => void;
  /** Go to this session's diff (a worktree session). */
  readonly onOpenDiff: () => void;
}

export function SessionView({ sessionId, onStateChange, onLeave, onOpenSession, onOpenDiff }: SessionViewProps) {
  const { client, capabilities, tokenRefused } = useDaemon();
  const { conversation, stream, failure, missing } = useConversation(sessionId);
  const snapshot = useSessionSettings(sessionId, conversation.agentSeq);
  // The events are the latest word; before any names the model or mode, the snapshot knows (a fork, a new session).
  const model = conversation.model ?? snapshot.model;
  const mode = conversation.mode ?? snapshot.mode;
  const forkSource = useForkSource(conversation.forkedFrom);
  const workspace = useWorkspaceStatus(sessionId, conversation);
  const [notice, setNotice] = useState<{
    readonly kind: 'error' | 'info';
    readonly text: string;
    /** The daemon could not be reached: true once it answers again (its stream back), so the notice goes. */
    readonly unreachable?: boolean;
  } | null>(null);
  useEffect(() => {
    if (stream === 'open') setNotice((shown) => (shown?.unreachable ? null : shown));
  }, [stream]);
  const scroller = useRef<HTMLDivElement>(null);
  const followBottom = useRef(true);
  /** Where the conversation was last scrolled to: a scroll upwards from there is the reader's own. */
  const lastTop = useRef(0);

  // Follow the answer as it streams, unless the reader scrolled up to read something. The text lands
  // in renders of its own (deferred), so every change to the conversation's content is followed, not
  // only new events; and only a scroll upwards stops it (the scroll event of our own jump, arriving
  // after more text came, measured a gap and stopped following).
  const followToBottom = useRef(() => {
    const element = scroller.current;
    if (element === null || !followBottom.current) return;
    element.scrollTop = element.scrollHeight;
    lastTop.current = element.scrollTop;
  });
  useLayoutEffect(() => followToBottom.current(), [conversation]);
  useEffect(() => {
    const element = scroller.current;
    if (element === null) return;
    const observer = new MutationObserver(() => followToBottom.current());
    observer.observe(element, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, []);

  const run = activeRun(conversation);
  const limits = formatPlanLimits(conversation.limits);
  const context = formatContextUsage(conversation.contextUsage);
  const prompts = openInteractions(conversation);
  // An answered card goes from under the keyboard: the focus stays at the bottom (the composer).
  const bottom = useRef<HTMLDivElement>(null);
  useFocusKeptIn(bottom, prompts.map((prompt) => prompt.interactionRef).join(' '));
  const followUps = waitingFollowUps(conversation);
  // The list polls; when this session starts, ends or waits, tell it now rather than at its next poll.
  const stateKey = `${run?.runId ?? ''}:${prompts.length}:${conversation.closed}:${missing}`;
  useEffect(() => onStateChange(), [stateKey, onStateChange]);
  const providerCapabilities = conversation.provider === null ? undefined : capabilities[conversation.provider];

  /**
   * The turn whose answer did not arrive, with the id it went out with: sent again as it is, it goes
   * with that id, and the daemon (which applies a commandId once) runs it at most once.
   */
  const unanswered = useRef<{ readonly key: string; readonly commandId: string } | null>(null);
  /** Runs a command; a refusal shows as a notice (and rejects, for the caller that keeps its input). */
  const command = async <T,>(action: () => Promise<T>): Promise<T> => {
    setNotice(null);
    try {
      return await action();
    } catch (error) {
      if (isTokenRefused(error)) tokenRefused();
      else
        setNotice({
          kind: 'error',
          text: describeFailure(error),
          unreachable: AgentError.isInstance(error) && error.code === 'runtime_stopped',
        });
      throw error;
    }
  };
  const answer = (interactionRef: string) => async (reply: InteractionAnswer) => {
    try {
      await client.respondInteraction({ sessionId, interactionRef, answer: reply });
    } catch (error) {
      // Another client answered first: its answer stands and the card goes with the next event.
      if (AgentError.isInstance(error) && error.code === 'interaction_already_settled') return;
      if (isTokenRefused(error)) return tokenRefused();
      throw new Error(describeFailure(error));
    }
  };
  const ignore = () => {};

  // Turns are numbered as the fork header of a fork counts them (turnNumber): controls do not count.
  let turns = 0;
  const turnActions = (entry: RunEntry, turn: number | null): TurnActionsProps | null => {
    if (turn === null) return null;
    const fork =
      providerCapabilities?.fork === true && canForkAt(entry)
        ? async () => {
            const receipt = await command(() => client.forkSession({ sessionId, atRunId: entry.runId }));
            onStateChange();
            onOpenSession(receipt.forkSessionId);
          }
        : null;
    const rewind =
      providerCapabilities?.rewind === true && canRewindTo(entry) && run === null && !conversation.closed
        ? async (files: boolean) => {
            const receipt = await command(() =>
              client.rewindSession({ sessionId, toRunId: entry.runId, ...(files ? { files } : {}) }),
            );
            const restored =
              receipt.files === null
                ? ''
                : ` ${receipt.files.paths.length} ${receipt.files.paths.length === 1 ? 'file' : 'files'} restored.`;
            setNotice({
              kind: 'info',
              text: `Rewound to before turn ${turn}: the next turn continues from there.${restored}`,
            });
          }
        : null;
    return {
      turn,
      onFork: fork,
      onRewind: rewind,
      offerFiles: providerCapabilities?.rewindFiles === true && canRestoreFilesOf(conversation.runs, entry),
    };
  };

  if (missing) return <SessionMissing sessionId={sessionId} onLeave={onLeave} />;

  return (
    <section className="session-view" aria-label="Session">
      <header className="session-header">
        <h2 className="session-title">{conversation.workspacePath ?? 'Session'}</h2>
        <p className="session-facts">
          <span>{modelLabel(model)}</span>
          <span>{modeLabel(mode)}</span>
          <span>
            Total: {formatTokens(conversation.totalUsage)} · {formatCost(conversation.totalUsage.costUsd)}
          </span>
          {limits === null ? null : <span className="session-limits">{limits}</span>}
          {context === null ? null : <span className="session-context">{context}</span>}
          {conversation.closed ? <span className="status-badge status-closed">Closed</span> : null}
        </p>
        <WorkspaceLine status={workspace} diffPath={sessionDiffPath(sessionId)} onOpenDiff={onOpenDiff} />
        {forkSource === null ? null : <ForkOriginLine source={forkSource} onOpenSession={onOpenSession} />}
        <SessionActions
          closed={conversation.closed}
          running={run !== null}
          onClose={async () => {
            await command(() => client.closeSession({ sessionId }));
          }}
          onReopen={async () => {
            await command(() => client.openSession({ continueSession: sessionId }));
          }}
          onDelete={async (discardWorkspaceChanges) => {
            const deleted = await command(() =>
              client.deleteSession(sessionId, discardWorkspaceChanges ? { discardWorkspaceChanges } : undefined),
            );
            onLeave(afterDeleteNotice(workspace, deleted.workspaceStatus));
          }}
          keptWork={keptWork(workspace)}
        />
      </header>
      {stream === 'reconnecting' ? (
        <p className="notice notice-warning" role="status">
          Reconnecting… the conversation resumes where it left off.
        </p>
      ) : null}
      {failure ? (
        <p className="notice notice-error" role="alert">
          {failure}
        </p>
      ) : null}
      <div
        className="conversation"
        ref={scroller}
        aria-live="polite"
        aria-busy={stream === 'connecting'}
        onScroll={(event) => {
          const element = event.currentTarget;
          if (element.scrollHeight - element.scrollTop - element.clientHeight < 80) followBottom.current = true;
          else if (element.scrollTop < lastTop.current - 4) followBottom.current = false;
          lastTop.current = element.scrollTop;
        }}
      >
        {stream === 'connecting' && conversation.lastSeq === 0 ? <p className="muted">Loading…</p> : null}
        {forkSource === null ? null : <InheritedTurns source={forkSource} onOpenSession={onOpenSession} />}
        {stream !== 'connecting' && conversation.runs.length === 0 ? (
          <p className="muted">
            {forkSource === null
              ? 'No turns yet. Say something below.'
              : 'No new turns yet. Continue the conversation below.'}
          </p>
        ) : null}
        {conversation.runs.map((entry) => (
          <RunView
            key={entry.runId}
            sessionId={sessionId}
            run={entry}
            interactions={conversation.interactions}
            actions={turnActions(entry, entry.control === null ? ++turns : null)}
            onOpenSession={onOpenSession}
          />
        ))}
        <ForkLinks forks={conversation.forks} onOpenSession={onOpenSession} />
        <WaitingFollowUps
          followUps={followUps}
          onWithdraw={async (inputId) => {
            try {
              await client.cancelQueuedInput({ sessionId, inputId });
            } catch (error) {
              // It started, was taken in or ended meanwhile: the conversation shows what became of it.
              if (AgentError.isInstance(error) && error.code === 'input_not_queued') return;
              if (isTokenRefused(error)) return tokenRefused();
              setNotice({ kind: 'error', text: describeFailure(error) });
            }
          }}
        />
      </div>
      <div className="session-bottom" ref={bottom}>
        {prompts.map((prompt) =>
          prompt.request.kind === 'approval' ? (
            <ApprovalCard
              key={prompt.interactionRef}
              request={prompt.request}
              onAnswer={answer(prompt.interactionRef)}
            />
          ) : (
            <QuestionCard
              key={prompt.interactionRef}
              interactionRef={prompt.interactionRef}
              request={prompt.request}
              onAnswer={answer(prompt.interactionRef)}
            />
          ),
        )}
        {notice ? (
          <p className={`notice notice-${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'}>
            {notice.text}
          </p>
        ) : null}
        <Composer
          sessionId={sessionId}
          running={run !== null}
          closed={conversation.closed}
          stopping={run?.stopRequested ?? false}
          acceptsImages={providerCapabilities?.images !== false}
          canSteer={providerCapabilities?.steer === true}
          onSend={async (text, images, delivery) => {
            const input = [...(text.trim() === '' ? [] : [{ type: 'text' as const, text }]), ...images];
            const key = JSON.stringify([sessionId, delivery, input]);
            const commandId = unanswered.current?.key === key ? unanswered.current.commandId : newCommandId();
            unanswered.current = { key, commandId };
            try {
              // A delivery is always given: a run another client started meanwhile queues the turn instead of refusing it.
              await command(() => client.submitTurn({ sessionId, input, delivery, commandId }));
              unanswered.current = null;
            } catch (error) {
              if (!answerUnknown(error)) {
                unanswered.current = null;
                throw error;
              }
              setNotice({
                kind: 'error',
                text: 'The daemon is not reachable, or its answer was lost: this turn may or may not have been sent. Send it again as it is: it goes with the same id, and runs at most once.',
                unreachable: true,
              });
              throw error;
            }
          }}
          queuedTurns={followUps.filter((followUp) => followUp.delivery === 'after_turn').length}
          onStop={(dropQueued) =>
            void command(() => client.interruptRun({ sessionId, ...(dropQueued ? { cancelQueued: true } : {}) })).catch(
              ignore,
            )
          }
        />
        <ControlsMenu
          provider={conversation.provider}
          capabilities={providerCapabilities}
          busy={run !== null || conversation.closed}
          currentMode={mode}
          modesRequiringRestart={snapshot.modesRequiringRestart}
          onControl={(name) => void command(() => client.runControl({ sessionId, name })).catch(ignore)}
          onSetModel={(model) =>
            void command(() => client.setModel({ sessionId, model }))
              .then((receipt) => setNotice({ kind: 'info', text: `Model set to ${receipt.model}.` }))
              .catch(ignore)
          }
          onSetMode={(mode: PermissionMode, restart: boolean) =>
            void command(() => client.setPermissionMode({ sessionId, mode, ...(restart ? { restart } : {}) }))
              .then((receipt) => {
                const label = permissionModeLabels[receipt.mode] ?? receipt.mode;
                setNotice({
                  kind: 'info',
                  text: restart
                    ? `Agent stopped: it starts again in ${label} mode with your next turn.`
                    : `Permission mode set to ${label}.`,
                });
              })
              .catch(ignore)
              // A refusal may mean the agent started or stopped meanwhile: read the modes again.
              .finally(snapshot.refresh)
          }
        />
      </div>
    </section>
  );
}

/** A command whose answer never came (lost, timed out, aborted): the client names the id it went with. */
function answerUnknown(error: unknown): boolean {
  return AgentError.isInstance(error) && typeof error.details?.commandId === 'string';
}
