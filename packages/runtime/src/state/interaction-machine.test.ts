import type { InteractionRequest, RespondInteractionCommand } from '@tether/protocol';
import { sampleSessionRecord } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import type { InteractionRecord, SessionRecord } from '../store/tether-store.js';
import {
  cancellations,
  decideRespond,
  evolveInteraction,
  recordableAnswer,
  sessionStateWith,
  startResolving,
} from './interaction-machine.js';

const at = '2026-11-29T00:00:00.000Z';
const sessionId = `ses_${'a'.repeat(32)}`;
const runId = `run_${'b'.repeat(32)}`;
const interactionRef = `int_${'c'.repeat(32)}`;
const session: SessionRecord = sampleSessionRecord({ sessionId, state: 'running', activeRunId: runId });
const approval: InteractionRequest = {
  kind: 'approval',
  toolName: 'Bash',
  toolUseId: 't',
  category: 'command',
  input: {},
  offerSessionApproval: false,
  defaultToNo: false,
};
const requested = evolveInteraction(
  undefined,
  sessionId,
  { type: 'interaction.requested', runId, interactionRef, request: approval },
  at,
)!;
const respond = (answer: RespondInteractionCommand['answer']): RespondInteractionCommand => ({
  type: 'respond_interaction',
  commandId: 'c',
  sessionId,
  interactionRef,
  answer,
});

describe('interaction lifecycle (pure)', () => {
  it('starts pending and ends exactly once', () => {
    expect(requested).toMatchObject({ status: 'pending', runId, settledAt: null });
    const settled = evolveInteraction(
      requested,
      sessionId,
      {
        type: 'interaction.settled',
        runId,
        interactionRef,
        outcome: 'approved',
        answer: { decision: 'approve' },
        by: 'host',
      },
      at,
    )!;
    expect(settled.status).toBe('approved');
    expect(
      evolveInteraction(
        settled,
        sessionId,
        { type: 'interaction.cancelled', runId, interactionRef, reason: 'run_ended' },
        at,
      ),
    ).toBe(settled);
    const resolving: InteractionRecord = { ...requested, status: 'resolving' };
    expect(
      evolveInteraction(resolving, sessionId, { type: 'interaction.withdrawn', runId, interactionRef }, at)?.status,
    ).toBe('withdrawn');
    expect(
      evolveInteraction(resolving, sessionId, { type: 'interaction.send_failed', runId, interactionRef }, at)?.status,
    ).toBe('send_failed');
  });

  it('decides who may answer: the first answer takes it (resolving), unknown and closed refuse without detail', () => {
    expect(decideRespond(session, requested, respond({ decision: 'approve' }))).toEqual({
      resolving: { ...requested, status: 'resolving' },
    });
    expect(decideRespond(session, { ...requested, status: 'resolving' }, respond({ decision: 'deny' }))).toMatchObject({
      refusal: { code: 'interaction_already_settled' },
    });
    expect(decideRespond(session, { ...requested, status: 'withdrawn' }, respond({ decision: 'deny' }))).toMatchObject({
      refusal: { code: 'interaction_already_settled' },
    });
    expect(decideRespond(session, undefined, respond({ decision: 'deny' }))).toMatchObject({
      refusal: { code: 'unknown_interaction' },
    });
    expect(
      decideRespond(session, { ...requested, sessionId: `ses_${'d'.repeat(32)}` }, respond({ decision: 'deny' })),
    ).toMatchObject({ refusal: { code: 'unknown_interaction' } });
    expect(decideRespond({ ...session, state: 'closed' }, requested, respond({ decision: 'deny' }))).toMatchObject({
      refusal: { code: 'unknown_interaction' },
    });
    // No such session: as every other command says it.
    expect(decideRespond(undefined, undefined, respond({ decision: 'deny' }))).toMatchObject({
      refusal: { code: 'session_not_found' },
    });
    expect(decideRespond(session, requested, respond({ decision: 'approve', scope: 'session' }))).toMatchObject({
      refusal: { code: 'capability_unsupported' },
    });
  });

  it('only a pending interaction can be taken for an answer', () => {
    expect(startResolving(requested)?.status).toBe('resolving');
    expect(startResolving({ ...requested, status: 'resolving' })).toBeNull();
    expect(startResolving({ ...requested, status: 'cancelled' })).toBeNull();
    expect(startResolving(undefined)).toBeNull();
  });

  it('cancels only open interactions, and a session waits while any is open', () => {
    const settled: InteractionRecord = { ...requested, interactionRef: `int_${'e'.repeat(32)}`, status: 'approved' };
    expect(cancellations([requested, settled], 'run_ended')).toEqual([
      { type: 'interaction.cancelled', runId, interactionRef, reason: 'run_ended' },
    ]);
    expect(sessionStateWith(session, 1)).toBe('waiting');
    expect(sessionStateWith(session, 0)).toBe('running');
    expect(sessionStateWith({ ...session, activeRunId: null, state: 'idle' }, 1)).toBe('idle');
  });

  it('redacts answers of sensitive question sets only', () => {
    const questions: InteractionRecord = {
      ...requested,
      request: {
        kind: 'question_set',
        toolUseId: 't',
        questions: [
          {
            header: '',
            question: 'Q?',
            options: [
              { label: 'A', description: '' },
              { label: 'B', description: '' },
            ],
            multiSelect: false,
          },
        ],
        sensitive: true,
      },
    };
    expect(recordableAnswer(questions, { decision: 'answer', answers: [{ text: 'secret' }] })).toBeNull();
    expect(recordableAnswer(requested, { decision: 'approve' })).toEqual({ decision: 'approve' });
  });
});
