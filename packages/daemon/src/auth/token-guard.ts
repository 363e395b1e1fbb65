import { type FSWatcher, statSync, watch } from 'node:fs';
import path from 'node:path';
import { AgentError } from '@tether/protocol';
import { readPrivateDataFile } from '@tether/store-sqlite';
import { secretsEqual } from './constant-time.js';
import { parseTokenFile, tokenFileName, tokenFilePath } from './token-file.js';

interface FileIdentity {
  readonly inode: number;
  readonly modifiedMs: number;
  readonly size: number;
}

function identityOf(filePath: string): FileIdentity | null {
  try {
    const stats = statSync(filePath);
    return { inode: stats.ino, modifiedMs: stats.mtimeMs, size: stats.size };
  } catch {
    return null;
  }
}

function sameIdentity(left: FileIdentity | null, right: FileIdentity | null): boolean {
  return left?.inode === right?.inode && left?.modifiedMs === right?.modifiedMs && left?.size === right?.size;
}

/**
 * The token in effect, kept in step with the token file: `tether token --rotate` (another process)
 * replaces the file, and the old token must stop working at once. Every check compares the file's
 * identity (a stat, no read) so a request right after a rotation is judged by the new token; a
 * directory watch closes idle streams and sockets promptly; `refresh()` is also called on a timer
 * in case the watch misses an event.
 */
export class TokenGuard {
  private current: string;
  private identity: FileIdentity | null;
  private readonly filePath: string;
  private readonly listeners = new Set<() => void>();
  private watcher: FSWatcher | null = null;

  constructor(dataDir: string, token: string) {
    this.filePath = tokenFilePath(dataDir);
    this.current = token;
    this.identity = identityOf(this.filePath);
  }

  get token(): string {
    this.refresh();
    return this.current;
  }

  /** True when `presented` is the current token (constant-time). */
  verify(presented: string | null | undefined): boolean {
    this.refresh();
    return typeof presented === 'string' && secretsEqual(presented, this.current);
  }

  /** Called after the token changed: everything authenticated with the old one must go. */
  onRotated(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Re-reads the token file if it changed. A missing, empty or untrusted (not ours alone) file keeps the token in effect. */
  refresh(): void {
    const identity = identityOf(this.filePath);
    if (identity === null || sameIdentity(identity, this.identity)) return;
    let content: string | null;
    try {
      content = readPrivateDataFile(this.filePath, '');
    } catch (error) {
      // A file that is not ours alone (planted, or widened) is never a source of tokens: the token in effect stays.
      if (AgentError.isInstance(error) && error.code === 'data_dir_unsafe') this.identity = identity;
      return;
    }
    this.identity = identity;
    const token = content === null ? null : parseTokenFile(content);
    if (token === null || token === this.current) return;
    this.current = token;
    for (const listener of this.listeners) listener();
  }

  watch(): void {
    if (this.watcher) return;
    try {
      // The directory, not the file: a rotation renames a new file over the old one.
      this.watcher = watch(path.dirname(this.filePath), { persistent: false }, (_event, fileName) => {
        if (fileName === null || fileName === tokenFileName) this.refresh();
      });
      this.watcher.on('error', () => this.stop());
    } catch {
      this.watcher = null;
    }
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
    this.listeners.clear();
  }
}
