import {
  AgentError,
  type ProtocolEvent,
  type RewindSessionCommand,
  type RewindSessionReceipt,
  type RestoredFiles,
} from '@tether/protocol';
import type { AgentProviderV1FileRewind } from '@tether/provider-spec';
import { continueFrom, decideRewind, runsContinuedBy } from '../../state/conversation-branches.js';
import type { TetherStore } from '../../store/tether-store.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

const eventPage = 1000;

/** The session's log, page by page (a rewind is rare; it reads which turns each rewind took out). */
async function* sessionEvents(store: TetherStore, sessionId: string): AsyncGenerator<ProtocolEvent> {
  for (let afterSeq = 0; ; ) {
    const page = await store.readEvents(sessionId, { afterSeq, limit: eventPage });
    yield* page;
    if (page.length < eventPage) return;
    afterSeq = page.at(-1)!.seq;
  }
}

async function runsContinuedByRun(store: TetherStore, sessionId: string, runId: string): Promise<string[]> {
  const events: ProtocolEvent[] = [];
  for await (const event of sessionEvents(store, sessionId)) {
    if (event.type === 'run.started' || event.type === 'session.rewound') events.push(event);
  }
  return runsContinuedBy(events, runId);
}

function rewindFilesUnsupported(provider: string): AgentError {
  return new AgentError({
    code: 'capability_unsupported',
    message: `The ${provider} provider cannot put a workspace's files back (rewind with files); rewind without files.`,
    details: { reason: 'rewind_files' },
  });
}

function refusedFileRewind(rewind: AgentProviderV1FileRewind): AgentError {
  return new AgentError({
    code: 'checkpoint_unavailable',
    message: `The agent cannot put the files back for that run${rewind.message ? `: ${rewind.message}` : ''}. Rewind without files, or to another run.`,
    details: { reason: rewind.reason ?? 'no_checkpoint' },
  });
}

/**
 * The conversation goes back to just before a run: recorded, then the agent is stopped so the next
 * turn starts a process from the cut point (the agent's transcript is never changed, so earlier
 * forks and rewinds stay valid). With files, the agent first puts the workspace's files back.
 */
export async function rewindSession(
  context: CommandContext,
  command: RewindSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<RewindSessionReceipt> {
  const found = context.entries.get(command.sessionId);
  if (found) {
    requireCapability(found.provider, (can) => can.rewind, 'rewind a conversation', 'rewind');
    if (command.files) {
      requireCapability(
        found.provider,
        (can) => can.rewindFiles,
        "put a workspace's files back (rewind with files); rewind without files",
        'rewind_files',
      );
    }
  }
  const runs = found ? await context.store.listRuns(command.sessionId) : [];
  const continued = found ? await runsContinuedByRun(context.store, command.sessionId, command.toRunId) : [];
  const decide = () => {
    const current = context.entries.get(command.sessionId);
    return accepted(current, decideRewind(current?.record, command, { runs, continued }));
  };
  let { entry, decision } = decide();
  let files: RestoredFiles | null = null;
  if (decision.fileRewindMessageId !== null) {
    const session = await context.providerSession(entry);
    // A provider that declares rewindFiles without the method is refused like one that does not declare it.
    if (!session.doRewindFiles) throw rewindFilesUnsupported(entry.record.provider);
    const request = { inputMessageId: decision.fileRewindMessageId };
    const dryRun = await session.doRewindFiles({ ...request, dryRun: true });
    if (!dryRun.canRewind) throw refusedFileRewind(dryRun);
    // A turn submitted while the agent was asked must not have its files changed under it.
    ({ entry, decision } = decide());
    const done = await session.doRewindFiles({ ...request, dryRun: false });
    if (!done.canRewind) throw refusedFileRewind(done);
    files = { paths: [...done.paths], insertions: done.insertions, deletions: done.deletions };
  }
  const receipt: RewindSessionReceipt = {
    type: 'rewind_session',
    commandId: command.commandId,
    sessionId: command.sessionId,
    toRunId: command.toRunId,
    files,
  };
  const bodies = decision.events.map((event) => (event.type === 'session.rewound' ? { ...event, files } : event));
  const cut = decision.copyConversation;
  await context.writeTogether([{ entry, bodies, amend: (record) => continueFrom(record, cut) }], receipt, fingerprint);
  // The running agent holds the turns after the cut in its context: the next turn starts a new one.
  await context.stopProcess(entry, 'release');
  return receipt;
}
