/** The x.y.z at the start of a version string ("2.1.332 (Claude Code)" → [2, 1, 332]); undefined when there is none. */
export function numericCore(version: string): [number, number, number] | undefined {
  const match = /^\s*v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Negative, zero or positive as `left` is older than, the same as or newer than `right`. */
export function compareVersions(left: [number, number, number], right: [number, number, number]): number {
  for (let index = 0; index < 3; index += 1) if (left[index] !== right[index]) return left[index]! - right[index]!;
  return 0;
}
