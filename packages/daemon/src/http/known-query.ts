import type { Context } from 'hono';
import { invalidRequest } from '../errors/error-response.js';

/**
 * The route's query parameters, each at most once: one it does not take (a misspelling, `afterSeq`
 * for `after`) or one given twice is refused, rather than read as if it were not there.
 */
export function knownQuery<Name extends string>(
  context: Context,
  names: readonly Name[],
): Partial<Record<Name, string>> {
  const given = context.req.queries();
  const known: Partial<Record<Name, string>> = {};
  for (const [name, values] of Object.entries(given)) {
    if (!(names as readonly string[]).includes(name))
      throw invalidRequest(
        `This route takes no query parameter "${name.slice(0, 100)}"; it takes ${names.length === 0 ? 'none' : names.join(', ')}.`,
        'unknown_query_parameter',
      );
    if (values.length > 1)
      throw invalidRequest(
        `The query parameter "${name}" is given ${values.length} times; give it once.`,
        'repeated_query_parameter',
      );
    known[name as Name] = values[0];
  }
  return known;
}
