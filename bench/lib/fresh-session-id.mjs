/**
 * The raw loop's argv with a new `--session-id`: a fixed one would collide from launch to launch in
 * one folder. Its own module: the raw leg's host imports nothing heavy (claude-setup.mjs loads Tether).
 */
import { randomUUID } from 'node:crypto';

export function withFreshSessionId(argv) {
  return argv.map((value, index) => (argv[index - 1] === '--session-id' ? randomUUID() : value));
}
