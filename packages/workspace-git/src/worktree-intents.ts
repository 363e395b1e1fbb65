import { readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A worktree being made for a session, recorded before git makes anything: a host ended outright
 * (SIGKILL, out of memory) half-way leaves its branch and folder named by no session, and its next
 * start takes them back from this (sweepIntents). Who may take them back is the owner: the data
 * directory whose lock the maker held, so only that directory's next host, never another host
 * sharing the worktree root while it makes a worktree of its own.
 */
export interface WorktreeIntent {
  readonly owner: string;
  readonly repository: string;
  readonly worktreePath: string;
  readonly branch: string;
  readonly baseCommit: string;
}

/**
 * Beside the worktree in the root, hidden (a session id never starts with a dot), and gone once
 * forgotten: a folder of intents would be left behind empty, or raced between two prepares.
 */
const intentSuffix = '.being-made.json';

function intentFile(root: string, sessionId: string): string {
  return path.join(root, `.${sessionId}${intentSuffix}`);
}

/**
 * Records the intent, whole or not at all (written aside, then renamed into place), and answers how
 * to forget it once the worktree is made or taken back.
 */
export async function recordIntent(
  root: string,
  sessionId: string,
  intent: WorktreeIntent,
): Promise<() => Promise<void>> {
  const file = intentFile(root, sessionId);
  const aside = `${file}.new`;
  await writeFile(aside, JSON.stringify(intent), { mode: 0o600 });
  await rename(aside, file);
  return () => rm(file, { force: true });
}

/** The intents an owner left (its host ended before it forgot them), each with how to forget it. */
export async function intentsLeftBy(
  root: string,
  owner: string,
): Promise<{ readonly intent: WorktreeIntent; readonly forget: () => Promise<void> }[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const left = [];
  for (const name of names.filter((entry) => entry.startsWith('.') && entry.endsWith(intentSuffix))) {
    const file = path.join(root, name);
    const intent = parseIntent(await readFile(file, 'utf8').catch(() => ''));
    const sessionId = name.slice(1, -intentSuffix.length);
    // Only a worktree in this root, named for the session the file is named for: nothing else is ever taken away.
    if (intent?.owner !== owner || intent.worktreePath !== path.join(root, sessionId)) continue;
    left.push({ intent, forget: () => rm(file, { force: true }) });
  }
  return left;
}

function parseIntent(text: string): WorktreeIntent | null {
  try {
    const parsed = JSON.parse(text) as Partial<Record<keyof WorktreeIntent, unknown>>;
    const { owner, repository, worktreePath, branch, baseCommit } = parsed;
    if (
      typeof owner === 'string' &&
      typeof repository === 'string' &&
      typeof worktreePath === 'string' &&
      typeof branch === 'string' &&
      typeof baseCommit === 'string'
    )
      return { owner, repository, worktreePath, branch, baseCommit };
    return null;
  } catch {
    return null;
  }
}
