import {
  type Stats,
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { AgentError } from '@tether/protocol';

// POSIX owners and mode bits: Windows has neither, and its ACLs are left to the user profile.
const posix = process.platform !== 'win32';

function modeText(stats: Stats): string {
  return `0${(stats.mode & 0o777).toString(8)}`;
}

function unsafe(message: string, reason: string): AgentError {
  return new AgentError({ code: 'data_dir_unsafe', message, details: { reason } });
}

/** Why `stats` is not ours alone, in words, or null when it is. */
function foreignOwner(stats: Stats): string | null {
  const uid = process.getuid!();
  return stats.uid === uid ? null : `is owned by uid ${stats.uid}, not by you (uid ${uid})`;
}

/**
 * Creates the data directory (mode 0700) if missing, or checks the one that exists. It holds the
 * token, daemon.json and every session's configuration, so whoever can write in it can plant a token
 * of their own (full API access) or a daemon.json that sends local commands, token and all, to their
 * own server. So a directory owned by someone else, or writable by group or others, is refused: what
 * is in it may already be planted, and only its owner can tell. One we own that others can merely
 * read or enter is tightened to 0700 (nothing can have been planted there).
 */
export function ensureDataDirectory(dataDir: string): void {
  if (posix) checkPathTo(dataDir);
  const created = mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask; say it once more for the directory we made.
  if (created !== undefined) chmodSync(dataDir, 0o700);
  if (!posix) return;
  const stats = statSync(dataDir);
  const refusal = refusalOf(dataDir, stats);
  if (refusal !== null) throw refusal;
  if ((stats.mode & 0o077) !== 0) chmodSync(dataDir, 0o700);
}

/** Why the existing data directory `stats` describes is not to be used; null when it is fine. */
function refusalOf(dataDir: string, stats: Stats): AgentError | null {
  if (!stats.isDirectory())
    return unsafe(
      `The data directory ${dataDir} is not a directory. Pass --data-dir (or TETHER_HOME) a directory of your own.`,
      'data_dir_not_directory',
    );
  const owner = foreignOwner(stats);
  if (owner !== null) {
    return unsafe(
      `The data directory ${dataDir} ${owner}: its owner could plant a token or a daemon.json in it. Use a directory of your own (--data-dir or TETHER_HOME).`,
      'data_dir_foreign',
    );
  }
  if ((stats.mode & 0o022) !== 0) {
    return unsafe(
      `The data directory ${dataDir} is writable by other users (mode ${modeText(stats)}): anyone could have planted a token or a daemon.json in it. Check its contents (remove daemon-token and daemon.json if you did not write them), run \`chmod 700 ${dataDir}\`, and start again.`,
      'data_dir_writable',
    );
  }
  return null;
}

/**
 * What ensureDataDirectory would refuse in the data directory as it is now, without making or changing
 * anything (tether doctor asks); null when nothing, or when it does not exist yet.
 */
export function dataDirectoryRefusal(dataDir: string): AgentError | null {
  if (!posix) return null;
  try {
    checkPathTo(dataDir);
    return refusalOf(dataDir, statSync(dataDir));
  } catch (error) {
    // Missing, or unreadable on the way: for the command that uses it to report.
    return AgentError.isInstance(error) ? error : null;
  }
}

/**
 * Who else can change what the data directory's path names. A symbolic link on the way that another user
 * owns, they can point elsewhere whenever they like, after every check here passed (in a sticky /tmp
 * only its owner can); so can anyone who may write in a folder on the way that has no sticky bit, by
 * renaming what is in it, whoever owns it. Either lets them put a folder of theirs where Tether writes its
 * token or makes a session's worktree (whose settings would run their hooks as this user). Links of
 * root's are trusted, as the system's own.
 */
function checkPathTo(dataDir: string): void {
  const uid = process.getuid!();
  const trusted = (stats: Stats) => stats.uid === uid || stats.uid === 0;
  const absolute = path.resolve(dataDir);
  const root = path.parse(absolute).root;
  let reached = root;
  for (const part of path
    .relative(root, absolute)
    .split(path.sep)
    .filter((name) => name.length > 0)) {
    const parent = reached;
    reached = path.join(reached, part);
    const folder = statSync(parent);
    if ((folder.mode & 0o002) !== 0 && (folder.mode & 0o1000) === 0) {
      throw unsafe(
        `The data directory ${dataDir} lies in ${parent}, which every user may write in (mode ${modeText(folder)}, no sticky bit): anyone could rename what is there and put a folder of theirs in its place. Use a directory under a folder of your own (--data-dir or TETHER_HOME).`,
        'data_dir_path_writable',
      );
    }
    let entry: Stats;
    try {
      entry = lstatSync(reached);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    if (entry.isSymbolicLink() && !trusted(entry)) {
      throw unsafe(
        `The data directory ${dataDir} is reached through ${reached}, a symbolic link owned by uid ${entry.uid}: its owner could point it at a folder of theirs at any time. Use a path without it (the link's target, if you trust it) or a directory of your own (--data-dir or TETHER_HOME).`,
        'data_dir_foreign',
      );
    }
  }
}

/**
 * Says whether an existing file in the data directory is ours alone (owner, mode 0600 or stricter, a
 * regular file), or throws data_dir_unsafe naming the file and what to do. Missing → false.
 */
export function checkPrivateDataFile(filePath: string, remedy: string): boolean {
  let stats: Stats;
  try {
    stats = lstatSync(filePath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  assertPrivate(filePath, stats, remedy);
  return true;
}

function assertPrivate(filePath: string, stats: Stats, remedy: string): void {
  if (!stats.isFile())
    throw unsafe(`${filePath} is not a regular file, so it is not trusted. ${remedy}`, 'file_not_regular');
  if (!posix) return;
  const owner = foreignOwner(stats);
  if (owner !== null) throw unsafe(`${filePath} ${owner}, so it is not trusted. ${remedy}`, 'file_foreign');
  if ((stats.mode & 0o077) !== 0)
    throw unsafe(
      `${filePath} is readable or writable by other users (mode ${modeText(stats)}), so it is not trusted. ${remedy}`,
      'file_not_private',
    );
}

/**
 * The text of a file in the data directory if it is ours alone (see checkPrivateDataFile), read
 * through the descriptor that was checked (no swap between check and read, no symlink followed);
 * null when it does not exist; data_dir_unsafe, with `remedy` in the message, when it is not private.
 */
export function readPrivateDataFile(filePath: string, remedy: string): string | null {
  let descriptor: number;
  try {
    descriptor = openSync(filePath, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP')
      throw unsafe(`${filePath} is a symbolic link, so it is not trusted. ${remedy}`, 'file_not_regular');
    throw error;
  }
  try {
    assertPrivate(filePath, fstatSync(descriptor), remedy);
    return readFileSync(descriptor, 'utf8');
  } finally {
    closeSync(descriptor);
  }
}
