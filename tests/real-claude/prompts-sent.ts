import type { ClaudeTestEnvironment } from '@tether/testkit';

/**
 * The prompts ("Prompt <name>.") the model was sent, in order, in a request of the turn that asked
 * `prompt`: its first, or its latest (a turn whose first request was held and cut off asks again).
 */
export function promptsSentWith(
  environment: ClaudeTestEnvironment,
  prompt: string,
  which: 'first' | 'latest' = 'first',
): string[] {
  const asking = environment.api.requests.filter(
    (candidate) => candidate.kind === 'turn' && candidate.view?.lastUserText.includes(prompt),
  );
  const request = which === 'first' ? asking[0] : asking.at(-1);
  if (!request) throw new Error(`The model was never asked "${prompt}".`);
  const history = JSON.stringify((request.body as { messages: unknown }).messages);
  return [...new Set(history.match(/Prompt [a-z-]+\./g))];
}
