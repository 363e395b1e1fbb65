import { useEffect, useReducer, useState } from 'react';
import type { ConnectionState } from '@tether/client';
import type { ProtocolEvent } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';
import { describeFailure, isTokenRefused } from '../connection/describe-failure.js';
import { type ConversationState, applyEvent, emptyConversation } from './conversation-state.js';

export type StreamState = 'connecting' | ConnectionState;

type Action = { readonly type: 'event'; readonly event: ProtocolEvent } | { readonly type: 'reset' };

function reduce(state: ConversationState, action: Action): ConversationState {
  return action.type === 'reset' ? emptyConversation : applyEvent(state, action.event);
}

export interface LiveConversation {
  readonly conversation: ConversationState;
  readonly stream: StreamState;
  /** Set when the stream cannot go on (session deleted, an event this page cannot read). */
  readonly failure: string | null;
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

  useEffect(() => {
    const controller = new AbortController();
    dispatch({ type: 'reset' });
    setStream('connecting');
    setFailure(null);
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
        setFailure(describeFailure(error));
      }
    })();
    return () => controller.abort();
  }, [client, sessionId, tokenRefused]);

  return { conversation, stream, failure };
}
