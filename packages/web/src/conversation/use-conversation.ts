import { useEffect, useReducer, useState } from 'react';
import type { ConnectionState } from '@tether/client';
import { AgentError, type ProtocolEvent } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';
import { describeFailure, isTokenRefused } from '../connection/describe-failure.js';
import { type ConversationState, applyEvent, emptyConversation } from './conversation-state.js';

/** 'ended': the stream stopped for good (see failure); the client no longer reconnects. */
export type StreamState = 'connecting' | ConnectionState | 'ended';

type Action = { readonly type: 'event'; readonly event: ProtocolEvent } | { readonly type: 'reset' };

function reduce(state: ConversationState, action: Action): ConversationState {
  return action.type === 'reset' ? emptyConversation : applyEvent(state, action.event);
}

export interface LiveConversation {
  readonly conversation: ConversationState;
  readonly stream: StreamState;
  /** Set when the stream cannot go on (an event this page cannot read, …). */
  readonly failure: string | null;
  /** The daemon has no session with this id: it never existed, or was deleted (here or elsewhere). */
  readonly missing: boolean;
}

/**
 * One session's events, replayed from the start and then live, folded into the conversation. The
 * client resumes a broken stream from the last seq it delivered, and the fold ignores any seq it
 * already has, so a reconnect never loses or doubles text; a reload simply replays.
 */
export function useConversation(sessionId: string): LiveConversation {
  const { client, tokenRefused } = useDaemon();
  const [conversation, dispatch] = useReducer(reduce, emptyConversation);
  const [stream, setStream] = useState<StreamState>('connecting');
  const [failure, setFailure] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    dispatch({ type: 'reset' });
    setStream('connecting');
    setFailure(null);
    setMissing(false);
    void (async () => {
      try {
        const events = client.subscribe(sessionId, {
          signal: controller.signal,
          onConnectionChange: (state) => setStream(state),
        });
        for await (const event of events) dispatch({ type: 'event', event });
      } catch (error) {
        if (controller.signal.aborted) return;
        if (isTokenRefused(error)) return tokenRefused();
        // The client gives up only on what retrying cannot change: neither loading nor reconnecting goes on.
        setStream('ended');
        if (AgentError.isInstance(error) && error.code === 'session_not_found') setMissing(true);
        else setFailure(describeFailure(error));
      }
    })();
    return () => controller.abort();
  }, [client, sessionId, tokenRefused]);

  return { conversation, stream, failure, missing };
}
