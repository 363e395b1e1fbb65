import { useState } from 'react';
import type { InteractionAnswer } from '@tether/protocol';

/**
 * Sends an answer once: the card's buttons stay disabled while it is on its way, and a refusal is
 * kept to show. On success nothing changes here: the card goes when the event stream says so.
 */
export function useAnswerSender(onAnswer: (answer: InteractionAnswer) => Promise<void>) {
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const send = async (answer: InteractionAnswer) => {
    setSending(true);
    setFailure(null);
    try {
      await onAnswer(answer);
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
      setSending(false);
    }
  };
  return { sending, failure, send };
}
