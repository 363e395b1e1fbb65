import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { createProcessMarker, isProcessMarker, processMarkerVariable } from './process-marker.js';
import { hasProcFilesystem } from './proc-filesystem.js';

/**
 * A host killed outright (SIGKILL, the OOM killer) runs no code of its own, so its agents ran on:
 * a claude until its turn ended (it reads its input's end only between turns), one waiting on the
 * model for good, and what their tools started until the next host on the machine swept them. A
 * small shell process, started with the host's first agent in a session of its own (a terminal's
 * signals do not reach it), holds the read end of a pipe only the host writes to: the host tells it
 * each agent's marker as the agent starts and again once it is gone, and when the pipe ends (the
 * host has exited, however) it ends every process still carrying a marker it was told (SIGTERM,
 * then SIGKILL after a second), the agents' process groups with them. A host that ended its agents
 * itself has told it every one, so its end costs nothing. Linux only (it reads /proc).
 */

const graceSeconds = 1;

// A marker line: `+marker` as its agent starts, `-marker` once it and what it left are gone.
const script = `
markers=' '
while IFS= read -r line; do
  case $line in
    +*) markers="$markers\${line#+} " ;;
    -*) m=\${line#-}; case $markers in *" $m "*) markers="\${markers%% $m *} \${markers#* $m }" ;; esac ;;
  esac
done
[ -z "\${markers# }" ] && exit 0
set --
for m in $markers; do set -- "$@" -e "${processMarkerVariable}=$m"; done
signal_marked() {
  found=''
  for f in $(grep -lsxzF "$@" /proc/[0-9]*/environ); do
    p=\${f#/proc/}; p=\${p%/environ}
    kill -s "$signal" -- "-$p" 2>/dev/null
    kill -s "$signal" "$p" 2>/dev/null
    found=1
  done
}
signal=TERM
signal_marked "$@"
[ -z "$found" ] && exit 0
sleep ${graceSeconds}
signal=KILL
signal_marked "$@"
`;

interface WatchState {
  /** The watch's input, once started; null when it could not be (the agents then go as before). */
  input: Writable | null | undefined;
}

// On globalThis: every copy of this module in one process (a test runner's re-imports) shares one watch.
const stateKey = Symbol.for('tether.provider-claude.host-exit-watch');

function state(): WatchState {
  const holder = globalThis as unknown as Record<symbol, WatchState | undefined>;
  holder[stateKey] ??= { input: undefined };
  return holder[stateKey];
}

/** Starts a watch: what is written to the returned input, it keeps; when the input ends, it ends the marked. */
export function startHostExitWatch(): Writable | null {
  if (!hasProcFilesystem()) return null;
  try {
    const child: ChildProcessByStdio<Writable, null, null> = spawn('/bin/sh', ['-c', script], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
      cwd: '/',
      // The host's own PATH first (grep and sleep live elsewhere on NixOS or Guix), then the usual places.
      env: { PATH: `${process.env.PATH ?? ''}:/usr/bin:/bin` },
    });
    child.on('error', () => {
      state().input = null;
    });
    child.stdin.on('error', () => {
      // The watch is gone (someone ended it): the agents go as they did before it.
      state().input = null;
    });
    // Neither keeps the host running: the watch is for the moment it stops.
    child.unref();
    (child.stdin as Writable & { unref?: () => void }).unref?.();
    return child.stdin;
  } catch {
    return null;
  }
}

function tell(line: string): void {
  const current = state();
  if (current.input === undefined) current.input = startHostExitWatch();
  current.input?.write(`${line}\n`);
}

/** An agent about to start: ended if the host exits before it is forgotten. */
export function watchAgentForHostExit(marker: string): void {
  if (isProcessMarker(marker)) tell(`+${marker}`);
}

/** The agent and what it left are gone: nothing of it is left for the watch to end. */
export function forgetAgentForHostExit(marker: string): void {
  if (isProcessMarker(marker) && state().input) tell(`-${marker}`);
}

/** A process the host starts that must not outlive it: the variable its environment carries, and its release once it ended. */
export interface HostBoundProcess {
  /** To add to the process's environment (what its children inherit too). */
  readonly environment: Readonly<Record<string, string>>;
  /** The process has ended (or was never started): nothing of it is left for the watch to end. */
  release(): void;
}

/**
 * For a process other than an agent that the host starts (a database server): with the marker in
 * its environment, it ends with the host however the host ends, as the agents do.
 */
export function bindProcessToHost(): HostBoundProcess {
  const marker = createProcessMarker();
  watchAgentForHostExit(marker);
  let released = false;
  return {
    environment: { [processMarkerVariable]: marker },
    release() {
      if (released) return;
      released = true;
      forgetAgentForHostExit(marker);
    },
  };
}
