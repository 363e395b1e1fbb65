import { mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Daemon, startDaemon } from '@tether/daemon';
import type { SessionDiff, SessionSnapshot } from '@tether/protocol';
import { type FakeWorkspaceAcquirer, createFakeWorkspaceAcquirer, createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Client, client } from './daemon-test-helpers.js';

/*
 * The diff route and delete's discardWorkspaceChanges over a workspace acquirer double (the
 * host's own git_worktree kind replaces the built-in one): what the routes pass on and answer.
 * Real git, the real binary and the CLI are in tests/workspaces/.
 */
let root: string;
let daemon: Daemon;
let api: Client;
let acquirer: FakeWorkspaceAcquirer;

/** What the daemon logged as errors: a failure of its own, never a request it answered as asked. */
let loggedErrors: Record<string, unknown>[] = [];

beforeEach(async () => {
  loggedErrors = [];
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-daemon-workspaces-')));
  acquirer = createFakeWorkspaceAcquirer({ root: path.join(root, 'worktrees') });
  daemon = await startDaemon({
    dataDir: path.join(root, 'data'),
    port: 0,
    providers: [createMockProvider()],
    workspaces: [acquirer],
    logger: {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (fields: Record<string, unknown>) => loggedErrors.push(fields),
    },
  });
  api = client(daemon);
});

afterEach(async () => {
  await daemon.close();
  await rm(root, { recursive: true, force: true });
});

type ErrorBody = { error: { code: string; message: string; details?: { reason?: string } } };

async function openWorktreeSession(): Promise<SessionSnapshot> {
  const { sessionId } = await api.command({
    type: 'open_session',
    workspace: { kind: 'git_worktree', repository: path.join(root, 'repository') },
  });
  return (await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
}

describe('GET /v1/sessions/:id/diff', () => {
  it("answers the acquirer's diff, cut at maxBytes (default 1 MiB); a bad maxBytes is invalid_command", async () => {
    const session = await openWorktreeSession();
    const files = [{ path: 'notes.txt', status: 'added' as const, added: 2, removed: 0, binary: false }];
    acquirer.setChanges({ session: files });
    const whole = await api.request('GET', `/v1/sessions/${session.sessionId}/diff`);
    expect(whole.status).toBe(200);
    expect((await whole.json()) as SessionDiff).toEqual({
      sessionId: session.sessionId,
      baseCommit: session.workspaceStatus!.worktree!.baseCommit,
      branch: session.workspaceStatus!.worktree!.branch,
      files,
      diff: 'diff --git a/notes.txt b/notes.txt\n',
      truncated: false,
    });
    const cut = (await (
      await api.request('GET', `/v1/sessions/${session.sessionId}/diff?maxBytes=10`)
    ).json()) as SessionDiff;
    expect(cut).toMatchObject({ files, diff: 'diff --git', truncated: true });

    for (const maxBytes of ['0', '-1', 'lots', '1.5', String(16 * 1024 * 1024 + 1)]) {
      const refused = await api.request('GET', `/v1/sessions/${session.sessionId}/diff?maxBytes=${maxBytes}`);
      expect(refused.status, maxBytes).toBe(400);
      expect(((await refused.json()) as ErrorBody).error).toMatchObject({
        code: 'invalid_command',
        details: { reason: 'invalid_max_bytes' },
      });
    }
    expect(acquirer.calls.filter((call) => call.step === 'diff')).toHaveLength(2);
  });

  it('a directory workspace has no diff (501 capability_unsupported); an unknown session is 404', async () => {
    const { sessionId } = await api.command({ type: 'open_session', workspace: { kind: 'directory', path: root } });
    const refused = await api.request('GET', `/v1/sessions/${sessionId}/diff`);
    expect(refused.status).toBe(501);
    expect(((await refused.json()) as ErrorBody).error).toMatchObject({
      code: 'capability_unsupported',
      details: { reason: 'workspace_diff' },
    });
    const missing = await api.request('GET', `/v1/sessions/ses_${'0'.repeat(32)}/diff`);
    expect(missing.status).toBe(404);
    // 501 is the caller asking what this workspace has not: logged as a request, not as the daemon failing.
    expect(loggedErrors).toEqual([]);
  });
});

describe('DELETE /v1/sessions/:id?discardWorkspaceChanges', () => {
  it('refuses a worktree holding work with 409 workspace_has_changes, deletes it with discardWorkspaceChanges=true', async () => {
    const session = await openWorktreeSession();
    const directory = session.workspaceStatus!.directory;
    acquirer.setWork(directory, 'uncommitted_changes');
    await api.command({ type: 'close_session', sessionId: session.sessionId });

    const refused = await api.request('DELETE', `/v1/sessions/${session.sessionId}`);
    expect(refused.status).toBe(409);
    const { error } = (await refused.json()) as ErrorBody;
    expect(error).toMatchObject({ code: 'workspace_has_changes', details: { reason: 'uncommitted_changes' } });
    expect(error.message).toContain(directory);
    expect(
      (await api.request('DELETE', `/v1/sessions/${session.sessionId}?discardWorkspaceChanges=false`)).status,
    ).toBe(409);
    expect((await api.request('GET', `/v1/sessions/${session.sessionId}`)).status).toBe(200);
    expect((await stat(directory)).isDirectory()).toBe(true);

    const malformed = await api.request('DELETE', `/v1/sessions/${session.sessionId}?discardWorkspaceChanges=yes`);
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as ErrorBody).error.details?.reason).toBe('invalid_discard_workspace_changes');

    const deleted = await api.request('DELETE', `/v1/sessions/${session.sessionId}?discardWorkspaceChanges=true`);
    expect(deleted.status).toBe(200);
    expect(((await deleted.json()) as { workspaceStatus: unknown }).workspaceStatus).toMatchObject({
      state: 'removed',
    });
    expect((await api.request('GET', `/v1/sessions/${session.sessionId}`)).status).toBe(404);
    await expect(stat(directory)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(acquirer.calls.at(-1)).toMatchObject({ step: 'release', release: { discardChanges: true } });
  });
});
