import { execFileSync } from 'node:child_process';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PreparedWorkspace } from '@tether/runtime';
import {
  type GitPlayground,
  agentErrorOf,
  branchBorrowedByTheMainCheckout,
  branches,
  gitPlayground,
  worktreeFolders,
  writeFiles,
} from './git-repository.test-helper.js';

const keep = { discardChanges: false, inUse: false };
const forDelete = { ...keep, forDelete: true };
const keptForCommits = { state: 'kept', keptBecause: 'commits_beyond_base' };

/** A worktree on `branch` with one commit beyond its base: the file BRANCH.txt holding "BRANCH". */
async function withACommit(playground: GitPlayground, branch: string): Promise<PreparedWorkspace> {
  const prepared = await playground.prepare({ branch });
  await playground.commitFile(prepared.directory, `${branch}.txt`, `${branch}\n`);
  return prepared;
}

/** git in the repository with `input` on its stdin; its stdout. */
function gitWithInput(playground: GitPlayground, args: string[], input: string): string {
  return execFileSync('git', args, {
    cwd: playground.repository,
    env: playground.environment,
    input,
    encoding: 'utf8',
  });
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

describe('release', () => {
  it('removes a clean worktree and its branch, leaving `git worktree list` consistent', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'clean' });

    const released = await playground.acquirer.release(prepared, keep);

    expect(released).toEqual({ ...prepared, state: 'removed', keptBecause: null, changedFiles: 0 });
    expect(await exists(prepared.directory)).toBe(false);
    expect(branches(playground)).toEqual(['main']);
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
    expect(playground.git(playground.repository, 'worktree', 'prune', '--dry-run', '--verbose')).toBe('');
    // Releasing again (a retried close) changes nothing.
    expect(await playground.acquirer.release(released, keep)).toEqual(released);
  });

  it('keeps a worktree with uncommitted changes, and one with only an untracked file', async () => {
    const playground = await gitPlayground();
    const edited = await playground.prepare({ branch: 'edited' });
    await writeFile(path.join(edited.directory, 'src/app.txt'), 'changed\n');
    const untracked = await playground.prepare({ branch: 'untracked' });
    await writeFile(path.join(untracked.directory, 'new.txt'), 'new\n');

    expect(await playground.acquirer.release(edited, keep)).toEqual({
      ...edited,
      state: 'kept',
      keptBecause: 'uncommitted_changes',
      changedFiles: 1,
    });
    expect(await playground.acquirer.release(untracked, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'uncommitted_changes',
    });
    expect(await readFile(path.join(edited.directory, 'src/app.txt'), 'utf8')).toBe('changed\n');
    expect(await readFile(path.join(untracked.directory, 'new.txt'), 'utf8')).toBe('new\n');
    expect(branches(playground)).toEqual(['edited', 'main', 'untracked']);
    expect(worktreeFolders(playground).sort()).toEqual(
      [playground.repository, edited.directory, untracked.directory].sort(),
    );
  });

  it("keeps a worktree with files written into a submodule's folder (never checked out there, so git does not see them)", async () => {
    const playground = await gitPlayground();
    const library = path.join(playground.folder, 'library');
    await mkdir(library);
    playground.git(library, 'init', '--quiet', '--initial-branch=main');
    await playground.commitFile(library, 'lib.txt', 'library\n');
    playground.git(
      playground.repository,
      '-c',
      'protocol.file.allow=always',
      'submodule',
      'add',
      '--quiet',
      library,
      'lib',
    );
    playground.git(playground.repository, 'commit', '--quiet', '-m', 'add the library');
    const untouched = await playground.prepare({ branch: 'untouched' });
    const written = await playground.prepare({ branch: 'written' });
    await writeFile(path.join(written.directory, 'lib', 'new.txt'), 'precious\n');

    expect(await playground.acquirer.release(untouched, keep)).toMatchObject({ state: 'removed' });
    expect(await playground.acquirer.release(written, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'uncommitted_changes',
    });
    expect(await readFile(path.join(written.directory, 'lib', 'new.txt'), 'utf8')).toBe('precious\n');

    // Checked out there by the agent, then edited: git sees only the submodule's commit, so no file is
    // listed as changed (docs/api.md says so), and the worktree is kept all the same.
    const checkedOut = await playground.prepare({ branch: 'checked-out' });
    playground.git(
      checkedOut.directory,
      '-c',
      'protocol.file.allow=always',
      'submodule',
      'update',
      '--init',
      '--quiet',
    );
    await writeFile(path.join(checkedOut.directory, 'lib', 'lib.txt'), 'edited\n');
    expect(await playground.acquirer.release(checkedOut, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'uncommitted_changes',
      changedFiles: 0,
    });
    expect(await readFile(path.join(checkedOut.directory, 'lib', 'lib.txt'), 'utf8')).toBe('edited\n');
  });

  it('keeps a worktree whose folder is no longer a worktree (its .git removed) while its branch has commits; removes it when told to discard', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'broken' });
    await playground.commitFile(prepared.directory, 'committed.txt', 'kept\n');
    await rm(path.join(prepared.directory, '.git'));
    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'commits_beyond_base',
    });
    // Told to discard, it goes with its registration and branch (git alone refuses: "validation failed").
    expect(await playground.acquirer.release(prepared, { discardChanges: true, inUse: false })).toMatchObject({
      state: 'removed',
      keptBecause: null,
    });
    expect(await exists(prepared.directory)).toBe(false);
    expect(branches(playground)).toEqual(['main']);
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
  });

  it('keeps a worktree whose folder is no longer a worktree (its .git removed) and holds files, its branch at the base; removes an emptied one', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'broken-uncommitted' });
    await writeFile(path.join(prepared.directory, 'precious.txt'), 'work\n');
    await rm(path.join(prepared.directory, '.git'));
    const keptUncounted = { ...prepared, state: 'kept', keptBecause: 'uncommitted_changes', changedFiles: null };
    // git cannot tell what its files hold (nor remove it: "validation failed"): kept as work, at close and at delete.
    expect(await playground.acquirer.release(prepared, keep)).toEqual(keptUncounted);
    expect(await playground.acquirer.release(prepared, forDelete)).toEqual(keptUncounted);
    expect(await readFile(path.join(prepared.directory, 'precious.txt'), 'utf8')).toBe('work\n');
    expect(branches(playground)).toEqual(['broken-uncommitted', 'main']);

    const emptied = await playground.prepare({ branch: 'broken-empty' });
    await rm(emptied.directory, { recursive: true });
    await mkdir(emptied.directory);
    expect(await playground.acquirer.release(emptied, keep)).toEqual({
      ...emptied,
      state: 'removed',
      keptBecause: null,
      changedFiles: 0,
    });
    expect(await exists(emptied.directory)).toBe(false);
    expect(branches(playground)).toEqual(['broken-uncommitted', 'main']);
    expect(worktreeFolders(playground)).toEqual([playground.repository, prepared.directory]);
  });

  it('keeps, with its uncommitted work, a worktree git cannot read (its own config broken), rather than remove it', async () => {
    const playground = await gitPlayground();
    playground.git(playground.repository, 'config', 'extensions.worktreeConfig', 'true');
    const prepared = await playground.prepare({ branch: 'unreadable' });
    await writeFile(path.join(prepared.directory, 'precious.txt'), 'work\n');
    const admin = playground.git(prepared.directory, 'rev-parse', '--absolute-git-dir').trim();
    await writeFile(path.join(admin, 'config.worktree'), '[core\nbroken');

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'uncommitted_changes',
      changedFiles: null,
    });
    expect(await readFile(path.join(prepared.directory, 'precious.txt'), 'utf8')).toBe('work\n');
    expect(branches(playground)).toEqual(['main', 'unreadable']);
  });

  it("removes a clean worktree of a repository whose list of files runs past git's usual 16 MiB of output", async () => {
    const playground = await gitPlayground();
    // 6,000 files whose paths are ~3,000 bytes long: an index listing of ~17 MiB, as a repository of
    // ~200,000 files of ordinary names has, made quickly.
    const blob = gitWithInput(playground, ['hash-object', '-w', '--stdin'], 'x\n').trim();
    const folder = Array.from({ length: 14 }, (_, level) => `${'d'.repeat(200)}${level}`).join('/');
    const entries = Array.from({ length: 6000 }, (_, index) => `100644 ${blob}\t${folder}/f${index}\n`).join('');
    gitWithInput(playground, ['update-index', '--add', '--index-info'], entries);
    playground.git(playground.repository, 'commit', '--quiet', '-m', 'many files');
    const prepared = await playground.prepare({ branch: 'large' });

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({ state: 'removed', keptBecause: null });
    expect(await exists(prepared.directory)).toBe(false);
    expect(branches(playground)).toEqual(['main']);
  }, 60_000);

  it("keeps a worktree whose untracked files' list runs past git's usual 16 MiB of output (an unignored dependency folder)", async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'many-untracked' });
    const folder = path.join(
      prepared.directory,
      ...Array.from({ length: 14 }, (_, level) => `${'u'.repeat(200)}${level}`),
    );
    await mkdir(folder, { recursive: true });
    await Promise.all(
      Array.from({ length: 6000 }, (_, index) => writeFile(path.join(folder, `f${index}`), `${index}\n`)),
    );

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'uncommitted_changes',
      changedFiles: 6000,
    });
    expect(await exists(path.join(folder, 'f5999'))).toBe(true);
  }, 60_000);

  it('removes a worktree that holds only ignored files (build output, as git itself does)', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare();
    await writeFiles(prepared.directory, { 'build/output.txt': 'ignored\n' });
    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({ state: 'removed' });
  });

  it('keeps a worktree whose branch has commits beyond the base, even when the folder itself is clean', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'committed' });
    await playground.commitFile(prepared.directory, 'feature.txt', 'done\n');

    expect(await playground.acquirer.release(prepared, keep)).toEqual({
      ...prepared,
      state: 'kept',
      keptBecause: 'commits_beyond_base',
      changedFiles: 1,
    });
    expect(await exists(path.join(prepared.directory, 'feature.txt'))).toBe(true);
    expect(branches(playground)).toContain('committed');
  });

  it("for a delete, removes a worktree whose commits the repository's checked-out branch or a tag holds; a close keeps it, as does a commit held nowhere else", async () => {
    const playground = await gitPlayground();
    const merged = await withACommit(playground, 'merged');
    playground.git(playground.repository, 'merge', '--quiet', '--ff-only', 'merged');
    const tagged = await withACommit(playground, 'tagged');
    playground.git(playground.repository, 'tag', 'v1', 'tagged');
    const partly = await withACommit(playground, 'partly-merged');
    playground.git(playground.repository, 'tag', 'first', 'partly-merged');
    await playground.commitFile(partly.directory, 'second.txt', 'not merged\n');

    // A close keeps it: reopening re-creates a removed worktree at its base, which lacks those commits.
    expect(await playground.acquirer.release(merged, keep)).toMatchObject(keptForCommits);
    expect(await playground.acquirer.release(merged, forDelete)).toMatchObject({ state: 'removed' });
    expect(await playground.acquirer.release(tagged, forDelete)).toMatchObject({ state: 'removed' });
    expect(await playground.acquirer.release(partly, forDelete)).toMatchObject(keptForCommits);
    expect(await exists(merged.directory)).toBe(false);
    expect(branches(playground)).toEqual(['main', 'partly-merged']);
    expect(playground.git(playground.repository, 'show', 'main:merged.txt')).toBe('merged\n');
  });

  it("for a delete, keeps commits only another session's branch, a remote-tracking ref or a broken tag would hold", async () => {
    const playground = await gitPlayground();
    // B stacked on A: A's commit is B's base, and B's own delete would not keep it.
    const first = await withACommit(playground, 'first');
    const stacked = await playground.prepare({ branch: 'stacked', baseRef: 'first' });
    // Pushed for review, not merged: the remote-tracking ref goes with the next fetch --prune.
    const pushed = await withACommit(playground, 'pushed');
    playground.git(playground.repository, 'update-ref', 'refs/remotes/origin/pushed', 'pushed');
    const broken = await withACommit(playground, 'broken');
    playground.git(playground.repository, 'tag', 'holds-it', 'broken');

    expect(await playground.acquirer.release(first, forDelete)).toMatchObject(keptForCommits);
    expect(await playground.acquirer.release(pushed, forDelete)).toMatchObject(keptForCommits);
    expect(await playground.acquirer.release(stacked, forDelete)).toMatchObject({ state: 'removed' });
    // A tag naming an object that is gone makes git's count fail: the delete counts as a close does.
    await writeFile(path.join(playground.repository, '.git/refs/tags/dangling'), `${'0'.repeat(39)}1\n`);
    expect(await playground.acquirer.release(broken, forDelete)).toMatchObject(keptForCommits);
    expect(branches(playground)).toEqual(['broken', 'first', 'main', 'pushed']);
  });

  it('keeps a worktree whose commits only its HEAD log holds (made on a detached HEAD, then left by a checkout)', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'returned-to' });
    playground.git(prepared.directory, 'switch', '--quiet', '--detach');
    await playground.commitFile(prepared.directory, 'detached.txt', 'made on a detached HEAD\n');
    const detachedCommit = playground.git(prepared.directory, 'rev-parse', 'HEAD').trim();
    playground.git(prepared.directory, 'switch', '--quiet', 'returned-to');

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'commits_beyond_base',
    });
    expect(playground.git(prepared.directory, 'rev-list', '--walk-reflogs', 'HEAD')).toContain(detachedCommit);
  });

  it('removes a worktree whose HEAD log holds only commits a branch keeps anyway', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare();
    playground.git(prepared.directory, 'switch', '--quiet', '-c', 'kept-elsewhere');
    await playground.commitFile(prepared.directory, 'feature.txt', 'on a branch of its own\n');
    playground.git(prepared.directory, 'switch', '--quiet', prepared.worktree!.branch);

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({ state: 'removed' });
    expect(branches(playground)).toContain('kept-elsewhere');
  });

  it('keeps the branch with its commits when the folder was deleted by hand, and drops the stale registration', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'committed' });
    await playground.commitFile(prepared.directory, 'feature.txt', 'done\n');
    await rm(prepared.directory, { recursive: true, force: true });

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'commits_beyond_base',
    });
    expect(branches(playground)).toContain('committed');
  });

  it('removes a clean worktree whose folder was deleted by hand: registration dropped, branch deleted', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'gone' });
    await rm(prepared.directory, { recursive: true, force: true });

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({ state: 'removed' });
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
    expect(branches(playground)).toEqual(['main']);
  });

  it("drops only its own registration: the user's worktree whose folder is away for now keeps its own", async () => {
    const playground = await gitPlayground();
    const users = path.join(path.dirname(playground.repository), 'users-worktree');
    playground.git(playground.repository, 'worktree', 'add', '--quiet', '-b', 'users-branch', users);
    const away = `${users}-away`;
    await rename(users, away);
    const prepared = await playground.prepare({ branch: 'gone-too' });
    await rm(prepared.directory, { recursive: true, force: true });

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({ state: 'removed' });
    await rename(away, users);
    // Back from the unmounted drive, it is still a worktree git knows (a prune would have dropped it).
    expect(playground.git(users, 'branch', '--show-current').trim()).toBe('users-branch');
    expect(worktreeFolders(playground)).toEqual([playground.repository, users]);
  });

  it('keeps a worktree its owner locked (git worktree lock), and removes it when told to discard', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'locked-one' });
    playground.git(playground.repository, 'worktree', 'lock', '--reason', 'mine', prepared.directory);

    expect(await playground.acquirer.release(prepared, keep)).toMatchObject({ state: 'kept', keptBecause: 'locked' });
    expect(await exists(prepared.directory)).toBe(true);
    expect(await playground.acquirer.release(prepared, { discardChanges: true, inUse: false })).toMatchObject({
      state: 'removed',
    });
    expect(await exists(prepared.directory)).toBe(false);
    expect(branches(playground)).toEqual(['main']);
  });

  it('keeps a worktree another open session uses, even when asked to discard', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare();

    for (const discardChanges of [false, true]) {
      expect(await playground.acquirer.release(prepared, { discardChanges, inUse: true })).toEqual({
        ...prepared,
        state: 'kept',
        keptBecause: 'in_use',
      });
    }
    expect(await exists(prepared.directory)).toBe(true);
  });

  it('removes work, commits and branch when told to discard changes', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'discarded' });
    await playground.commitFile(prepared.directory, 'feature.txt', 'done\n');
    await writeFile(path.join(prepared.directory, 'scratch.txt'), 'uncommitted\n');

    const released = await playground.acquirer.release(prepared, { discardChanges: true, inUse: false });

    expect(released).toMatchObject({ state: 'removed', keptBecause: null });
    expect(await exists(prepared.directory)).toBe(false);
    expect(branches(playground)).toEqual(['main']);
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
  });

  it('told to discard, removes the folder of a worktree whose repository was moved away; without, fails saying so', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'orphaned' });
    await writeFile(path.join(prepared.directory, 'scratch.txt'), 'uncommitted\n');
    await rename(playground.repository, `${playground.repository}-moved`);

    const refused = await agentErrorOf(playground.acquirer.release(prepared, keep));
    expect(refused).toMatchObject({ code: 'invalid_workspace', details: { reason: 'not_a_git_repository' } });
    expect(refused.message).toContain(`repository ${playground.repository} is gone`);
    expect(refused.message).toContain('tether delete --discard-changes');
    expect(await exists(prepared.directory)).toBe(true);
    const released = await playground.acquirer.release(prepared, { discardChanges: true, inUse: false });
    expect(released).toMatchObject({ state: 'removed', keptBecause: null });
    expect(await exists(prepared.directory)).toBe(false);
  });

  it('releases a worktree made from a linked worktree that was removed since, through the repository both belong to', async () => {
    const playground = await gitPlayground();
    const linked = `${playground.repository}-linked`;
    playground.git(playground.repository, 'worktree', 'add', '--quiet', '-b', 'feature', linked);
    const clean = await playground.prepare({ repository: linked, branch: 'clean-from-linked' });
    const committed = await playground.prepare({ repository: linked, branch: 'committed-from-linked' });
    await playground.commitFile(committed.directory, 'feature.txt', 'done\n');
    playground.git(playground.repository, 'worktree', 'remove', linked);

    expect(await playground.acquirer.release(clean, keep)).toMatchObject({ state: 'removed', keptBecause: null });
    expect(await playground.acquirer.release(committed, keep)).toMatchObject({
      state: 'kept',
      keptBecause: 'commits_beyond_base',
      changedFiles: 1,
    });
    expect(await exists(clean.directory)).toBe(false);
    expect(branches(playground)).toEqual(['committed-from-linked', 'feature', 'main']);
    expect(worktreeFolders(playground).sort()).toEqual([playground.repository, committed.directory].sort());
    expect(await playground.acquirer.release(committed, { discardChanges: true, inUse: false })).toMatchObject({
      state: 'removed',
    });
    expect(branches(playground)).toEqual(['feature', 'main']);
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
    // What the session records stays the folder its host named.
    expect(clean.worktree?.repository).toBe(linked);
  });

  it('leaves the branch to whoever checked it out elsewhere since (it is theirs now), and says so', async () => {
    const playground = await gitPlayground();
    const prepared = await branchBorrowedByTheMainCheckout(playground);

    const released = await playground.acquirer.release(prepared, keep);
    expect(released).toMatchObject({ state: 'kept', keptBecause: 'checked_out_elsewhere' });
    expect(branches(playground)).toContain('borrowed');
    expect(playground.git(playground.repository, 'branch', '--show-current').trim()).toBe('borrowed');
    // Told to discard, it still removes nothing of that checkout's.
    expect(await playground.acquirer.release(prepared, { ...keep, discardChanges: true })).toEqual(released);
    expect(branches(playground)).toContain('borrowed');
  });

  it('says the branch was left when git keeps it, checked out in the main checkout too (--ignore-other-worktrees)', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'shared-checkout' });
    playground.git(playground.repository, 'checkout', '--quiet', '--ignore-other-worktrees', 'shared-checkout');

    expect(await playground.acquirer.release(prepared, keep)).toEqual({
      ...prepared,
      state: 'kept',
      keptBecause: 'checked_out_elsewhere',
      changedFiles: null,
    });
    expect(await exists(prepared.directory)).toBe(false);
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
    expect(playground.git(playground.repository, 'branch', '--show-current').trim()).toBe('shared-checkout');
  });

  it('keeps a worktree moved with `git worktree move`, its uncommitted work and branch where they are, discarding or not', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'moved' });
    await writeFile(path.join(prepared.directory, 'draft.txt'), 'mine\n');
    const elsewhere = path.join(playground.folder, 'moved-by-hand');
    playground.git(playground.repository, 'worktree', 'move', prepared.directory, elsewhere);

    const released = await playground.acquirer.release(prepared, keep);
    expect(released).toEqual({ ...prepared, state: 'kept', keptBecause: 'checked_out_elsewhere', changedFiles: null });
    expect(await playground.acquirer.release(prepared, { ...keep, discardChanges: true })).toEqual(released);
    expect(await readFile(path.join(elsewhere, 'draft.txt'), 'utf8')).toBe('mine\n');
    expect(playground.git(elsewhere, 'branch', '--show-current').trim()).toBe('moved');
    expect(worktreeFolders(playground).sort()).toEqual([playground.repository, elsewhere].sort());

    // Reopened, the session cannot have its branch back while that checkout holds it, and says how to give it back.
    const refused = await agentErrorOf(playground.acquirer.restore(released, { sessionId: 'ses_moved' }));
    expect(refused.details?.reason).toBe('branch_checked_out');
    expect(refused.message).toContain(`git worktree move FOLDER ${prepared.directory}`);
    playground.git(playground.repository, 'worktree', 'move', elsewhere, prepared.directory);
    expect(await playground.acquirer.restore(released, { sessionId: 'ses_moved' })).toMatchObject({ state: 'ready' });
    expect(await readFile(path.join(prepared.directory, 'draft.txt'), 'utf8')).toBe('mine\n');
  });
});
