import { connect } from 'node:net';
import type { Check } from './credentials-check.js';

/** How long doctor waits for the endpoint to take a connection. */
const connectTimeoutMs = 3_000;

/**
 * ANTHROPIC_BASE_URL, when set: a URL the agent can use, whose host takes a connection. Unchecked,
 * a wrong one surfaced only after the CLI's ten retries of each turn (about three minutes). Nothing
 * is sent: only a TCP connection is opened and closed. Undefined when it is not set (the default
 * endpoint is not probed, so doctor needs no network).
 */
export async function checkEndpoint(
  environment: Readonly<Record<string, string | undefined>>,
): Promise<Check | undefined> {
  const value = environment.ANTHROPIC_BASE_URL?.trim();
  if (!value) return undefined;
  const name = 'endpoint';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return {
      name,
      ok: false,
      detail: 'ANTHROPIC_BASE_URL is not a URL',
      fix: 'Set it to the API endpoint, e.g. https://api.anthropic.com, or unset it.',
    };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return {
      name,
      ok: false,
      detail: `ANTHROPIC_BASE_URL is a ${url.protocol}// URL`,
      fix: 'Give an http:// or https:// URL, or unset it.',
    };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const where = `${url.protocol}//${url.host}`;
  const reached = await new Promise<string | null>((resolve) => {
    const socket = connect({ host, port });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(connectTimeoutMs, () => done(`no answer within ${connectTimeoutMs / 1000} s`));
    socket.once('connect', () => done(null));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
  return reached === null
    ? { name, ok: true, detail: `ANTHROPIC_BASE_URL ${where} takes connections` }
    : {
        name,
        ok: false,
        detail: `ANTHROPIC_BASE_URL ${where} cannot be reached (${reached})`,
        fix: 'Check the URL and that the endpoint runs; every turn would otherwise fail after the CLI has retried for minutes.',
      };
}
