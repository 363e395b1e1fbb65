import { readdirSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCreatorNamedFolderSync, removeFoldersOfEndedCreators } from './creator-named-folders.js';
import { forgetAgentForHostExit, watchAgentForHostExit } from './host-exit-watch.js';
import { isProcessMarker } from './process-marker.js';
import { sweepDescendants } from './sweep-descendants.js';

/**
 * The markers of this host's agents whose processes may still run, one empty file each, named for
 * the marker, in a folder named for this host (`tether-agents-<pid namespace>-<pid>-<start time>-XXXXXX`).
 * A file is written before its claude is spawned and removed once the claude has exited and what it
 * left was swept; the folder exists only while there is such a file. A host that is SIGKILLed leaves its files behind, and the next host on the machine
 * sweeps every marker in them as it starts (`sweepAgentsOfEndedHosts`). The store's record of a
 * session's process (session.process_started) does not cover that: it is written after the spawn
 * and cleared at the exit, before the sweep of what the claude's tools left (a process that ignores
 * SIGTERM gets a second of grace) is done; a host killed meanwhile left such a process running for good.
 */
export const liveAgentsFolderPrefix = 'tether-agents-';

interface LiveAgentsState {
  /** Made at the first agent, removed when the last one is forgotten: a host with no agent leaves nothing. */
  folder: string | undefined;
  recorded: number;
}

// On globalThis: every copy of this module in one process (a test runner's re-imports) shares one folder.
const stateKey = Symbol.for('tether.provider-claude.live-agents');

function state(): LiveAgentsState {
  const holder = globalThis as unknown as Record<symbol, LiveAgentsState | undefined>;
  holder[stateKey] ??= { folder: undefined, recorded: 0 };
  return holder[stateKey];
}

/**
 * Records an agent about to be spawned. Never throws: a temporary folder that cannot be written
 * leaves supervision to the store's record of the session's process alone.
 */
export function recordLiveAgent(marker: string): void {
  // Ended at once if this host is killed; the file below is for a host that starts after it.
  watchAgentForHostExit(marker);
  const current = state();
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      current.folder ??= createCreatorNamedFolderSync(liveAgentsFolderPrefix);
      writeFileSync(path.join(current.folder, marker), '', { mode: 0o600 });
      current.recorded++;
      return;
    } catch {
      // The folder was removed under this host (a cleaner of the temporary folder): make another once.
      current.folder = undefined;
      current.recorded = 0;
    }
  }
}

/** The agent has exited and what it left was swept: nothing of it is left to look for. */
export function forgetLiveAgent(marker: string): void {
  forgetAgentForHostExit(marker);
  const current = state();
  if (current.folder === undefined) return;
  try {
    unlinkSync(path.join(current.folder, marker));
  } catch {
    // Never recorded (the folder could not be written), or gone with its folder.
    return;
  }
  current.recorded--;
  if (current.recorded > 0) return;
  try {
    rmdirSync(current.folder);
  } catch {
    // Gone already.
  }
  current.folder = undefined;
}

/** The markers this host holds now (for tests). */
export function liveAgentMarkers(): string[] {
  const { folder } = state();
  try {
    return folder === undefined ? [] : readdirSync(folder);
  } catch {
    return [];
  }
}

/**
 * Ends every process still carrying a marker that a host now gone recorded (the agents it left and
 * what their tools started), then removes its folder; with `otherPrefixes`, such a host's other
 * folders go in the same look at `directory` (one read of the temporary folder as a host starts).
 * Only this user's folders whose creator is certainly gone are read (see creator-named-folders.ts),
 * and only processes whose environment carries a recorded marker are signalled. Returns the
 * signalled pids. Never rejects.
 */
export async function sweepAgentsOfEndedHosts(
  options: { readonly otherPrefixes?: readonly string[]; readonly directory?: string } = {},
): Promise<number[]> {
  const { otherPrefixes = [], directory = os.tmpdir() } = options;
  const signalled: number[] = [];
  await removeFoldersOfEndedCreators([liveAgentsFolderPrefix, ...otherPrefixes], directory, async (folder) => {
    if (!path.basename(folder).startsWith(liveAgentsFolderPrefix)) return true;
    const markers = (await readdir(folder).catch(() => [])).filter(isProcessMarker);
    const results = await Promise.all(markers.map((marker) => sweepDescendants({ marker })));
    signalled.push(...results.flatMap((result) => result.signalled));
    // Survivors stay recorded, for the next host to look for.
    return results.every((result) => result.survivors.length === 0);
  });
  return signalled;
}
