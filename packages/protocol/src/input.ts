import { z } from 'zod';

export const TextInputPart = z.strictObject({
  type: z.literal('text'),
  text: z.string().min(1).max(1_000_000),
});
export type TextInputPart = z.infer<typeof TextInputPart>;

/**
 * Input parts accepted by submit_turn. Only text today; any other part type is refused
 * with capability_unsupported (see validateCommand), not with a parse error.
 */
export const InputPart = TextInputPart;
export type InputPart = z.infer<typeof InputPart>;

/** The loose shape used to recognise an input part before its type is known to be supported. */
export const AnyInputPart = z.looseObject({ type: z.string().min(1).max(100) });
