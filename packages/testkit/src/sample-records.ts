import { type ApprovalRequest, type WorkspaceStatus, zeroUsage } from '@tether/protocol';
import type { SessionRecord } from '@tether/runtime';

/** A session row for unit tests of the state machines and stores: idle, nothing known yet. */
export function sampleSessionRecord(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const at = '2026-11-29T00:00:00.000Z';
  return {
    sessionId: `ses_${'a'.repeat(32)}`,
    provider: 'mock',
    workspace: { kind: 'directory', path: '/tmp' },
    workspaceStatus: null,
    configuration: {},
    ephemeral: false,
    redactInput: false,
    state: 'idle',
    activeRunId: null,
    permissionMode: null,
    model: null,
    liveProcess: null,
    providerSessionId: null,
    forkedFrom: null,
    copyConversation: null,
    usage: zeroUsage,
    title: null,
    lastRun: null,
    lastSeq: 1,
    createdAt: at,
    updatedAt: at,
    lastActivityAt: at,
    ...overrides,
  };
}

/** A worktree Tether prepared for a session: ready, on tether/aaaaaaaa from a fixed base commit; tests override the rest. */
export function sampleWorktreeStatus(overrides: Partial<WorkspaceStatus> = {}): WorkspaceStatus {
  const directory = '/data/worktrees/ses_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
  return {
    kind: 'git_worktree',
    directory,
    worktree: { repository: '/work/project', path: directory, branch: 'tether/aaaaaaaa', baseCommit: 'b'.repeat(40) },
    state: 'ready',
    keptBecause: null,
    changedFiles: null,
    ...overrides,
  };
}

/** An approval the agent asks for before running `ls`; tests override what they look at. */
export function sampleApprovalRequest(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    kind: 'approval',
    toolName: 'Bash',
    toolUseId: 'toolu-1',
    category: 'command',
    input: { command: 'ls' },
    offerSessionApproval: false,
    defaultToNo: true,
    ...overrides,
  };
}

/** Two AskUserQuestion questions (the tool input's shape): one single-choice, one multiple-choice. */
export const sampleQuestions = {
  color: {
    question: 'Which color should the button be?',
    header: 'Color',
    options: [
      { label: 'Red', description: 'warm' },
      { label: 'Blue', description: 'cool' },
    ],
    multiSelect: false,
  },
  sizes: {
    question: 'Which sizes should we ship?',
    header: 'Sizes',
    options: [
      { label: 'Small', description: 's' },
      { label: 'Medium', description: 'm' },
      { label: 'Large', description: 'l' },
    ],
    multiSelect: true,
  },
};
