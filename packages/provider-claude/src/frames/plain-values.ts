/**
 * Checks the frames' fast paths share: a value that passes them is one the zod schema accepts and
 * parses to an equal value.
 */

/** A plain object whose copy by the schema is equal to it. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    // The schema's copy drops an own __proto__ key: such a value would parse to something else.
    !Object.hasOwn(value, '__proto__')
  );
}

export function isNullishString(value: unknown): boolean {
  return value == null || typeof value === 'string';
}

/** What z.number().nullish() accepts: no NaN, no infinity. */
export function isNullishNumber(value: unknown): boolean {
  return value == null || (typeof value === 'number' && Number.isFinite(value));
}

export function isNullishBoolean(value: unknown): boolean {
  return value == null || typeof value === 'boolean';
}

/** What z.array(z.string()).nullish() accepts. */
export function isNullishStringList(value: unknown): boolean {
  if (value == null) return true;
  if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}
