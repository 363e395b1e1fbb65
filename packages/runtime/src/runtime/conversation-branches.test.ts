import type { AgentProviderV1FileRewind } from '@tether/provider-spec';
import { zeroUsage } from '@tether/protocol';
import {
  type MockProvider,
  type MockProviderOptions,
  type MockTurnContext,
  agentErrorOf,
  createMockProvider,
  replyWith,
  replyWithCheckpoint,
} from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';
import type { AgentRuntime } from './runtime-types.js';
import { runtimePerTest } from './runtime-per-test.test-helper.js';

const harness = runtimePerTest('tether-branches-');
// Several runtimes per test (one per provider set-up), each shut down after it.
const started: AgentRuntime[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((runtime) => runtime.shutdown()));
});
const branching = { fork: true, rewind: true, rewindFiles: true };
const restored: AgentProviderV1FileRewind = {
  canRewind: true,
  paths: ['/workspace/notes.md'],
  insertions: 3,
  deletions: 1,
};

interface Setup {
  runtime: AgentRuntime;
  provider: MockProvider;
  sessionId: string;
  /** Turns held open (when `hold` is set), for the test to finish. */
  held: MockTurnContext[];
  hold: { on: boolean };
  /** Submits a turn and waits for it to end; its runId. */
  turn(text: string, sessionId?: string): Promise<string>;
  /** The provider sessions opened for a Tether session, in order. */
  providerSessions(sessionId: string): MockProvider['sessions'];
}

async function setUp(
  options: MockProviderOptions = {},
  open: { ephemeral?: boolean; fileCheckpointing?: boolean } = {},
): Promise<Setup> {
  const held: MockTurnContext[] = [];
  const hold = { on: false };
  const reply = replyWithCheckpoint();
  const provider = createMockProvider({
    turn: (context) => (hold.on ? void held.push(context) : reply(context)),
    rewindFiles: () => restored,
    ...options,
    capabilities: { ...branching, ...options.capabilities },
  });
  const runtime = await createAgentRuntime({ providers: [provider] });
  started.push(runtime);
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'directory', path: harness.workspace },
    ...open,
  });
  return {
    runtime,
    provider,
    sessionId,
    held,
    hold,
    async turn(text, session = sessionId) {
      const { runId } = await runtime.submitTurn({ sessionId: session, input: [{ type: 'text', text }] });
      if (!hold.on) await runtime.waitForRun(runId);
      return runId;
    },
    providerSessions: (session) => provider.sessions.filter((opened) => opened.options.sessionId === session),
  };
}

/** What a refused command must leave as it was: every session's log and snapshot, and the agents (a dry run aside). */
async function unchangedBy(setup: Setup, command: () => Promise<unknown>) {
  const { runtime, provider } = setup;
  const sessions = await runtime.listSessions();
  const logs = await Promise.all(sessions.map((session) => runtime.readEvents(session.sessionId)));
  const agentsOf = () =>
    provider.sessions.map((session) => ({
      stops: [...session.stops],
      rewinds: session.fileRewinds.filter((rewind) => !rewind.dryRun).length,
    }));
  const agents = agentsOf();
  const error = await agentErrorOf(command());
  expect(await runtime.listSessions()).toEqual(sessions);
  expect(await Promise.all(sessions.map((session) => runtime.readEvents(session.sessionId)))).toEqual(logs);
  expect(agentsOf()).toEqual(agents);
  return error;
}

describe('fork_session', () => {
  it("forks at a run: the fork's agent copies the conversation up to it, both logs say so, the source goes on untouched", async () => {
    const setup = await setUp();
    const { runtime, sessionId } = setup;
    await setup.turn('first');
    const second = await setup.turn('second');
    await setup.turn('third');
    const conversation = `conversation-${sessionId}-1`;
    expect((await runtime.getRun(second)).checkpoint).toEqual({
      providerSessionId: conversation,
      inputMessageId: `input-${second}`,
      lastMessageId: `answer-${second}`,
    });
    const sourceBefore = await runtime.getSession(sessionId);

    const receipt = await runtime.forkSession({ sessionId, atRunId: second });
    const forkId = receipt.forkSessionId;
    expect(receipt).toMatchObject({ type: 'fork_session', sessionId, atRunId: second });
    const fork = await runtime.getSession(forkId);
    expect(fork).toMatchObject({
      state: 'idle',
      forkedFrom: { sessionId, runId: second },
      title: 'first',
      providerSessionId: null,
      workspace: sourceBefore.workspace,
      lastRun: null,
    });
    expect(await runtime.readEvents(forkId)).toMatchObject([
      { type: 'session.opened', seq: 1, forkedFrom: { sessionId, runId: second }, reopened: false },
    ]);
    expect((await runtime.readEvents(sessionId)).at(-1)).toMatchObject({
      type: 'session.forked',
      forkSessionId: forkId,
      atRunId: second,
    });

    await setup.turn('in the fork', forkId);
    const [forkAgent] = setup.providerSessions(forkId);
    expect(forkAgent!.options).toMatchObject({
      resumeProviderSessionId: null,
      copyConversation: { providerSessionId: conversation, afterMessageId: `answer-${second}` },
    });
    // Once the copy reported its own id, the fork resumes that.
    expect((await runtime.getSession(forkId)).providerSessionId).toBe(`conversation-${forkId}-1`);

    const sourceAfter = await runtime.getSession(sessionId);
    expect(sourceAfter).toMatchObject({
      providerSessionId: conversation,
      forkedFrom: null,
      lastRun: sourceBefore.lastRun,
    });
    expect(setup.providerSessions(sessionId).map((agent) => agent.stops)).toEqual([[]]);
    await setup.turn('the source continues');
    expect(setup.providerSessions(sessionId)).toHaveLength(1);
  });

  it('forks the whole conversation without atRunId, a pending copy as it stands, and an empty session as a fresh one', async () => {
    const setup = await setUp();
    const { runtime, sessionId } = setup;
    const empty = await runtime.forkSession({ sessionId });
    expect(empty.atRunId).toBeNull();
    await setup.turn('in the empty fork', empty.forkSessionId);
    expect(setup.providerSessions(empty.forkSessionId)[0]!.options).toMatchObject({
      resumeProviderSessionId: null,
      copyConversation: null,
    });

    const first = await setup.turn('first');
    const whole = await runtime.forkSession({ sessionId });
    // Cut where the conversation stood: a turn the source takes before the fork's agent starts is not the fork's.
    const goesOn = await setup.turn('the source goes on first');
    const copy = { providerSessionId: `conversation-${sessionId}-1`, afterMessageId: `answer-${first}` };
    await setup.turn('in the whole fork', whole.forkSessionId);
    expect(setup.providerSessions(whole.forkSessionId)[0]!.options.copyConversation).toEqual(copy);

    // A fork of a fork that has not started yet copies what the first would have.
    const firstFork = await runtime.forkSession({ sessionId });
    const second = await runtime.forkSession({ sessionId: firstFork.forkSessionId });
    const later = { providerSessionId: `conversation-${sessionId}-1`, afterMessageId: `answer-${goesOn}` };
    await setup.turn('in the fork of the fork', second.forkSessionId);
    expect(setup.providerSessions(second.forkSessionId)[0]!.options.copyConversation).toEqual(later);
    expect((await runtime.getSession(second.forkSessionId)).forkedFrom).toEqual({
      sessionId: firstFork.forkSessionId,
      runId: null,
    });
  });

  it("forks at a run while the source's run is active: the fork has none of the source's queued follow-ups, and both go on", async () => {
    const setup = await setUp();
    const { runtime, sessionId } = setup;
    const first = await setup.turn('first');
    setup.hold.on = true;
    const active = await setup.turn('held');
    const queued = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'after the held one' }],
      delivery: 'after_turn',
    });
    const { forkSessionId } = await runtime.forkSession({ sessionId, atRunId: first });
    expect(await runtime.getSession(forkSessionId)).toMatchObject({ state: 'idle', queuedInputs: [] });
    setup.hold.on = false;
    const inFork = await setup.turn('in the fork', forkSessionId);
    expect((await runtime.getRun(inFork)).outcome).toBe('succeeded');

    replyWithCheckpoint()(setup.held[0]!);
    await runtime.waitForRun(active);
    expect((await runtime.waitForRun(queued.runId)).outcome).toBe('succeeded');
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
    expect((await runtime.readEvents(forkSessionId)).map((event) => event.type)).not.toContain('input.started');
  });

  it('forks a closed session', async () => {
    const setup = await setUp();
    const run = await setup.turn('first');
    await setup.runtime.closeSession({ sessionId: setup.sessionId });
    const { forkSessionId } = await setup.runtime.forkSession({ sessionId: setup.sessionId, atRunId: run });
    expect((await setup.runtime.getSession(forkSessionId)).state).toBe('idle');
    expect((await setup.runtime.getSession(setup.sessionId)).state).toBe('closed');
  });

  it('answers a retried command with the same receipt, forking once', async () => {
    const setup = await setUp();
    const sourceRun = await setup.turn('first');
    const first = await setup.runtime.forkSession({ sessionId: setup.sessionId, commandId: 'fork-once' });
    const again = await setup.runtime.forkSession({ sessionId: setup.sessionId, commandId: 'fork-once' });
    expect(again).toEqual(first);
    expect(await setup.runtime.listSessions()).toHaveLength(2);
    // The source's runs are not the fork's: a rewind or fork at one says whose run it is.
    const refusal = await agentErrorOf(
      setup.runtime.rewindSession({ sessionId: first.forkSessionId, toRunId: sourceRun }),
    );
    expect(refusal).toMatchObject({
      code: 'run_not_found',
      details: { reason: 'other_session', sessionId: setup.sessionId },
    });
    expect(refusal.message).toContain(`Fork ${setup.sessionId} at it instead`);
    expect(
      await agentErrorOf(setup.runtime.forkSession({ sessionId: first.forkSessionId, atRunId: sourceRun })),
    ).toMatchObject({ code: 'run_not_found', details: { reason: 'other_session', sessionId: setup.sessionId } });
    // A run no session has is refused as ever.
    expect(
      await agentErrorOf(
        setup.runtime.rewindSession({ sessionId: first.forkSessionId, toRunId: `run_${'0'.repeat(32)}` }),
      ),
    ).not.toHaveProperty('details.reason');
    expect(
      (await setup.runtime.readEvents(setup.sessionId)).filter((event) => event.type === 'session.forked'),
    ).toHaveLength(1);
  });

  it('refuses, changing nothing: an unknown or unfinished run, a run without a checkpoint, an active run, an ephemeral session, a provider that cannot fork', async () => {
    const setup = await setUp({ turn: undefined });
    const { runtime, sessionId } = setup;
    const unchecked = await setup.turn('answered without a checkpoint');
    expect(await unchangedBy(setup, () => runtime.forkSession({ sessionId, atRunId: unchecked }))).toMatchObject({
      code: 'checkpoint_unavailable',
      details: { reason: 'no_checkpoint' },
    });
    expect(
      await unchangedBy(setup, () => runtime.forkSession({ sessionId, atRunId: `run_${'0'.repeat(32)}` })),
    ).toMatchObject({ code: 'run_not_found' });
    expect(await unchangedBy(setup, () => runtime.forkSession({ sessionId: `ses_${'0'.repeat(32)}` }))).toMatchObject({
      code: 'session_not_found',
    });

    const busy = await setUp();
    busy.hold.on = true;
    const active = await busy.turn('held');
    expect(await unchangedBy(busy, () => busy.runtime.forkSession({ sessionId: busy.sessionId }))).toMatchObject({
      code: 'run_active',
    });
    expect(
      await unchangedBy(busy, () => busy.runtime.forkSession({ sessionId: busy.sessionId, atRunId: active })),
    ).toMatchObject({ code: 'run_active' });

    const ephemeral = await setUp({}, { ephemeral: true });
    expect(
      await unchangedBy(ephemeral, () => ephemeral.runtime.forkSession({ sessionId: ephemeral.sessionId })),
    ).toMatchObject({ code: 'invalid_command', details: { reason: 'ephemeral_session' } });

    const unable = await setUp({ capabilities: { fork: false } });
    expect(await unchangedBy(unable, () => unable.runtime.forkSession({ sessionId: unable.sessionId }))).toMatchObject({
      code: 'capability_unsupported',
      details: { reason: 'fork' },
    });
  });
});

describe('rewind_session', () => {
  it('refuses to cut before turns recorded without checkpoints (by an older Tether), which the cut would drop; after later checkpointed turns, cuts there', async () => {
    const withCheckpoint = replyWithCheckpoint();
    const kind = { of: 'stored before checkpoints' as 'stored before checkpoints' | 'local command' | 'now' };
    const setup = await setUp({
      turn: (context) => {
        if (kind.of === 'now') return withCheckpoint(context);
        // Answered as the model answers (tokens out), or as a local command (/cost: no model, no checkpoint).
        const outputTokens = kind.of === 'local command' ? 0 : 5;
        context.emit({ type: 'run.usage', runId: context.runId, ...zeroUsage, outputTokens });
        replyWith('answered')(context);
      },
    });
    const { runtime, sessionId } = setup;
    await setup.turn('first, stored before checkpoints');
    const second = await setup.turn('second, stored before checkpoints');

    const refused = await unchangedBy(setup, () => runtime.rewindSession({ sessionId, toRunId: second }));
    expect(refused).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(refused.message).toContain('recorded without a checkpoint');

    kind.of = 'now';
    const third = await setup.turn('third');
    kind.of = 'local command';
    await setup.turn('/cost');
    kind.of = 'now';
    const fifth = await setup.turn('fifth');
    // A local command after the checkpoint adds nothing a cut could lose: the cut is after the third turn.
    await runtime.rewindSession({ sessionId, toRunId: fifth });
    await setup.turn('sixth');
    expect(setup.providerSessions(sessionId).at(-1)!.options.copyConversation).toMatchObject({
      afterMessageId: `answer-${third}`,
    });
  });

  it('continues from before the run: recorded, the agent stopped and started again from the cut point', async () => {
    const setup = await setUp();
    const { runtime, sessionId } = setup;
    const first = await setup.turn('first');
    const second = await setup.turn('second');
    const third = await setup.turn('third');
    const conversation = `conversation-${sessionId}-1`;

    const receipt = await runtime.rewindSession({ sessionId, toRunId: third });
    expect(receipt).toMatchObject({ type: 'rewind_session', toRunId: third, files: null });
    expect((await runtime.readEvents(sessionId)).at(-1)).toMatchObject({
      type: 'session.rewound',
      toRunId: third,
      files: null,
    });
    expect(setup.providerSessions(sessionId)[0]!.stops).toEqual(['release']);

    const fourth = await setup.turn('fourth');
    expect(setup.providerSessions(sessionId)[1]!.options).toMatchObject({
      resumeProviderSessionId: null,
      copyConversation: { providerSessionId: conversation, afterMessageId: `answer-${second}` },
    });
    expect((await runtime.getSession(sessionId)).providerSessionId).toBe(`conversation-${sessionId}-2`);

    // Rewinding the turn after a rewind cuts where that turn started: after the second, not the third it replaced.
    await runtime.rewindSession({ sessionId, toRunId: fourth });
    await setup.turn('fifth');
    expect(setup.providerSessions(sessionId)[2]!.options.copyConversation).toEqual({
      providerSessionId: conversation,
      afterMessageId: `answer-${second}`,
    });

    // Back to before the first turn: nothing to copy, nothing to resume.
    await runtime.rewindSession({ sessionId, toRunId: first });
    expect((await runtime.getSession(sessionId)).providerSessionId).toBeNull();
    await setup.turn('anew');
    expect(setup.providerSessions(sessionId)[3]!.options).toMatchObject({
      resumeProviderSessionId: null,
      copyConversation: null,
    });
  });

  it('rewinds a fork to its first turn: back to the conversation it was copied from, not to nothing', async () => {
    const setup = await setUp();
    const { runtime, sessionId } = setup;
    const first = await setup.turn('first');
    const second = await setup.turn('second');
    const conversation = `conversation-${sessionId}-1`;
    const atRun = await runtime.forkSession({ sessionId, atRunId: first });
    const whole = await runtime.forkSession({ sessionId });
    // A fork of a fork with no turn yet was copied from what its source was copied from.
    const ofWhole = await runtime.forkSession({ sessionId: whole.forkSessionId });
    const expected = [
      [atRun.forkSessionId, `answer-${first}`],
      [whole.forkSessionId, `answer-${second}`],
      [ofWhole.forkSessionId, `answer-${second}`],
    ] as const;
    await setup.turn('the source goes on');
    for (const [forkId, afterMessageId] of expected) {
      const own = await setup.turn('first in the fork', forkId);
      await setup.turn('second in the fork', forkId);
      await runtime.rewindSession({ sessionId: forkId, toRunId: own });
      expect((await runtime.getSession(forkId)).providerSessionId).not.toBeNull();
      await setup.turn('again in the fork', forkId);
      expect(setup.providerSessions(forkId)[1]!.options).toMatchObject({
        resumeProviderSessionId: null,
        copyConversation: { providerSessionId: conversation, afterMessageId },
      });
    }
  });

  it('refuses to take a fork back to before its first turn once its source is deleted, changing nothing; a later run still works', async () => {
    const setup = await setUp();
    const { runtime, sessionId } = setup;
    const first = await setup.turn('first');
    const { forkSessionId } = await runtime.forkSession({ sessionId, atRunId: first });
    const own = await setup.turn('first in the fork', forkSessionId);
    const second = await setup.turn('second in the fork', forkSessionId);
    await setup.turn('third in the fork', forkSessionId);
    await runtime.closeSession({ sessionId });
    await runtime.deleteSession(sessionId);
    // Starting anew here would drop the conversation the fork continues, unasked.
    const refused = await unchangedBy(setup, () => runtime.rewindSession({ sessionId: forkSessionId, toRunId: own }));
    expect(refused).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'fork_source_deleted' } });
    expect(refused.message).toContain(sessionId);
    // After a turn of its own, the fork's own conversation is the cut point.
    await runtime.rewindSession({ sessionId: forkSessionId, toRunId: second });
    await setup.turn('again in the fork', forkSessionId);
    const opened = setup.providerSessions(forkSessionId);
    expect(opened[opened.length - 1]!.options).toMatchObject({
      copyConversation: { afterMessageId: `answer-${own}` },
    });
  });

  it('a run after which the conversation started anew leaves nothing to copy: a fork as it stands or at it, a rewind after it (in a fork too) start empty; no files to put back to it or before it', async () => {
    const reply = replyWithCheckpoint();
    // As Claude's /clear: a new conversation id, then a checkpoint naming no message.
    const clear = ({ runId, emit }: MockTurnContext) => {
      emit({ type: 'session.provider_session_changed', providerSessionId: `cleared-${runId}` });
      emit({
        type: 'run.checkpointed',
        runId,
        providerSessionId: `cleared-${runId}`,
        inputMessageId: null,
        lastMessageId: null,
      });
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    };
    const setup = await setUp({
      turn: (context) => {
        const text = context.input[0]?.type === 'text' ? context.input[0].text : '';
        return text === '/clear' ? clear(context) : reply(context);
      },
    });
    const { runtime, sessionId } = setup;
    const first = await setup.turn('first');
    const { forkSessionId: origin } = await runtime.forkSession({ sessionId, atRunId: first });
    const cleared = await setup.turn('/clear');
    const asItStands = await runtime.forkSession({ sessionId });
    const atClear = await runtime.forkSession({ sessionId, atRunId: cleared });
    await setup.turn('the source goes on');
    for (const forkId of [asItStands.forkSessionId, atClear.forkSessionId]) {
      await setup.turn('in the fork', forkId);
      expect(setup.providerSessions(forkId)[0]!.options).toMatchObject({ copyConversation: null });
    }
    // In a fork, a rewind to after its clear starts empty, not from what the fork was copied from.
    await setup.turn('/clear', origin);
    const afterClear = await setup.turn('after the clear', origin);
    await runtime.rewindSession({ sessionId: origin, toRunId: afterClear });
    await setup.turn('after the rewind', origin);
    expect(setup.providerSessions(origin).at(-1)!.options).toMatchObject({
      resumeProviderSessionId: null,
      copyConversation: null,
    });
    const refused = await unchangedBy(setup, () => runtime.rewindSession({ sessionId, toRunId: cleared, files: true }));
    expect(refused).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(refused.message).toContain('took no input of yours');
    // Before the clear: the agent of the new conversation keeps none of the old one's file checkpoints.
    const beforeClear = await unchangedBy(setup, () =>
      runtime.rewindSession({ sessionId, toRunId: first, files: true }),
    );
    expect(beforeClear).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(beforeClear.message).toContain('cleared (/clear) after that run');
  });

  it('puts the files back first with files: a dry run, then the rewind, recorded with what changed', async () => {
    const setup = await setUp();
    const { runtime, sessionId } = setup;
    await setup.turn('first');
    const second = await setup.turn('second');
    const receipt = await runtime.rewindSession({ sessionId, toRunId: second, files: true });
    const files = { paths: restored.paths, insertions: 3, deletions: 1 };
    expect(receipt.files).toEqual(files);
    expect(setup.providerSessions(sessionId)[0]!.fileRewinds).toEqual([
      { inputMessageId: `input-${second}`, dryRun: true },
      { inputMessageId: `input-${second}`, dryRun: false },
    ]);
    expect((await runtime.readEvents(sessionId)).find((event) => event.type === 'session.rewound')).toMatchObject({
      toRunId: second,
      files,
    });
  });

  it("refuses with the agent's reason when its dry run finds nothing to put back, changing nothing", async () => {
    const setup = await setUp({
      rewindFiles: () => ({
        canRewind: false,
        reason: 'no_checkpoint',
        message: 'No file checkpoint found for this message.',
        paths: [],
        insertions: 0,
        deletions: 0,
      }),
    });
    const run = await setup.turn('first');
    const error = await unchangedBy(setup, () =>
      setup.runtime.rewindSession({ sessionId: setup.sessionId, toRunId: run, files: true }),
    );
    expect(error).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(error.message).toBe(
      'The agent cannot put the files back for that run: No file checkpoint found for this message. Rewind without files, or to another run.',
    );
    expect(setup.providerSessions(setup.sessionId)[0]!.fileRewinds).toEqual([
      { inputMessageId: `input-${run}`, dryRun: true },
    ]);
  });

  it('answers a retried command with the same receipt, rewinding once', async () => {
    const setup = await setUp();
    const run = await setup.turn('first');
    const first = await setup.runtime.rewindSession({
      sessionId: setup.sessionId,
      toRunId: run,
      commandId: 'rewind-once',
    });
    const again = await setup.runtime.rewindSession({
      sessionId: setup.sessionId,
      toRunId: run,
      commandId: 'rewind-once',
    });
    expect(again).toEqual(first);
    expect(
      (await setup.runtime.readEvents(setup.sessionId)).filter((event) => event.type === 'session.rewound'),
    ).toHaveLength(1);
  });

  it('refuses, changing nothing: closed, active run, unknown run, no checkpoint for files, checkpointing off, ephemeral, missing capabilities', async () => {
    const setup = await setUp({ turn: undefined });
    const { runtime, sessionId } = setup;
    const unchecked = await setup.turn('answered without a checkpoint');
    expect(
      await unchangedBy(setup, () => runtime.rewindSession({ sessionId, toRunId: unchecked, files: true })),
    ).toMatchObject({
      code: 'checkpoint_unavailable',
      details: { reason: 'no_checkpoint' },
    });
    expect(
      await unchangedBy(setup, () => runtime.rewindSession({ sessionId, toRunId: `run_${'0'.repeat(32)}` })),
    ).toMatchObject({ code: 'run_not_found' });
    await runtime.closeSession({ sessionId });
    expect(await unchangedBy(setup, () => runtime.rewindSession({ sessionId, toRunId: unchecked }))).toMatchObject({
      code: 'session_closed',
    });

    const busy = await setUp();
    const done = await busy.turn('done');
    busy.hold.on = true;
    await busy.turn('held');
    expect(
      await unchangedBy(busy, () => busy.runtime.rewindSession({ sessionId: busy.sessionId, toRunId: done })),
    ).toMatchObject({
      code: 'run_active',
    });

    const refusals: {
      options?: MockProviderOptions;
      open?: { ephemeral?: boolean; fileCheckpointing?: boolean };
      files?: boolean;
      expected: object;
    }[] = [
      {
        open: { fileCheckpointing: false },
        files: true,
        expected: { code: 'checkpoint_unavailable', details: { reason: 'file_checkpointing_off' } },
      },
      { open: { ephemeral: true }, expected: { code: 'invalid_command', details: { reason: 'ephemeral_session' } } },
      {
        options: { capabilities: { rewind: false } },
        expected: { code: 'capability_unsupported', details: { reason: 'rewind' } },
      },
      {
        options: { capabilities: { rewindFiles: false } },
        files: true,
        expected: { code: 'capability_unsupported', details: { reason: 'rewind_files' } },
      },
      // Declared, but the provider session has no doRewindFiles.
      {
        options: { rewindFiles: undefined },
        files: true,
        expected: { code: 'capability_unsupported', details: { reason: 'rewind_files' } },
      },
    ];
    for (const { options, open, files, expected } of refusals) {
      const refused = await setUp(options, open);
      const toRunId = await refused.turn('first');
      const rewind = () =>
        refused.runtime.rewindSession({ sessionId: refused.sessionId, toRunId, files: files ?? false });
      expect(await unchangedBy(refused, rewind)).toMatchObject(expected);
    }
  });
});
