import { z } from 'zod';

/** One model an agent offers, as a picker shows it. */
export const ModelDescription = z.looseObject({
  /** What to pass as `model` (open_session, set_model): an alias such as "sonnet", or a full name. */
  id: z.string().min(1).max(200),
  displayName: z.string().max(200),
  description: z.string().max(2000),
  /** The full model name the alias stands for today, when the agent says. */
  resolvedModel: z.string().max(200).nullable(),
  /** The `effort` levels it takes; empty when it takes none. */
  effortLevels: z.array(z.string().max(50)).max(20),
  supportsFastMode: z.boolean(),
  supportsAdaptiveThinking: z.boolean(),
  supportsAutoMode: z.boolean(),
});
export type ModelDescription = z.infer<typeof ModelDescription>;

/** GET /v1/providers/:name/models: the agent's model list, kept per agent version. */
export const ModelList = z.looseObject({
  provider: z.string(),
  /** The agent version the list came from (it is built into the agent, so it changes with it). */
  agentVersion: z.string().nullable(),
  models: z.array(ModelDescription),
});
export type ModelList = z.infer<typeof ModelList>;
