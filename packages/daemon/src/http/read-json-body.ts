import type { Context } from 'hono';
import { invalidRequest } from '../errors/error-response.js';

/** The request body as JSON; a malformed body is invalid_command (the parser's message is not echoed: it quotes the body). */
export async function readJsonBody(context: Context): Promise<unknown> {
  const text = await context.req.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidRequest('The request body is not valid JSON. Send one command as a JSON object.', 'malformed_json');
  }
}
