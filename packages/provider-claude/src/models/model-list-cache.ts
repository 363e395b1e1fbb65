import type { AgentModels } from './list-models.js';

/**
 * Model lists for the whole process, like passed version checks (binary/checked-binaries.ts): the list
 * is built into the agent, so it changes only with the binary, the environment or the settings files
 * every agent reads (all three in the key: list-models.ts' modelListKey). Concurrent askers share one
 * read; a failure is not kept, so a retry asks again.
 */
const lists = new Map<string, Promise<AgentModels>>();

/** The list kept under `key`, or the one `read` gives (kept unless it fails). A null key keeps nothing. */
export function rememberedModelList(key: string | null, read: () => Promise<AgentModels>): Promise<AgentModels> {
  if (key === null) return read();
  let list = lists.get(key);
  if (!list) {
    list = read();
    lists.set(key, list);
    list.catch(() => lists.delete(key));
  }
  return list;
}
