import { errorFromResponse, invalidResponseError, unreachableError } from './client-errors.js';

/** How the client reaches one daemon: where, with which token, through which fetch. */
export interface DaemonConnection {
  /** The daemon's base URL, without a trailing slash (kept as given, so a path prefix survives). */
  readonly url: string;
  readonly token: string;
  readonly fetch: typeof fetch;
}

export function createDaemonConnection(url: string, token: string, fetchFunction?: typeof fetch): DaemonConnection {
  return {
    url: url.replace(/\/+$/, ''),
    token,
    // Called as a plain function: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    fetch: fetchFunction ?? ((input, init) => globalThis.fetch(input, init)),
  };
}

export interface DaemonRequest {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Path and query, starting with "/". */
  readonly path: string;
  readonly body?: unknown;
  /** Public routes (/health) are sent without the token. */
  readonly authenticated?: boolean;
}

/** Sends one request; answers the response when it is a success, else throws the AgentError it stands for. */
async function fetchAnswer(connection: DaemonConnection, request: DaemonRequest, accept: string): Promise<Response> {
  const headers: Record<string, string> = { accept };
  if (request.authenticated !== false) headers.authorization = `Bearer ${connection.token}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await connection.fetch(`${connection.url}${request.path}`, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
  } catch (error) {
    throw unreachableError(connection.url, error);
  }
  if (!response.ok) throw await errorFromResponse(response, connection.url);
  return response;
}

/** Sends one request; answers the parsed JSON body (undefined for 204), or throws an AgentError. */
export async function sendRequest(connection: DaemonConnection, request: DaemonRequest): Promise<unknown> {
  const response = await fetchAnswer(connection, request, 'application/json');
  if (response.status === 204) return undefined;
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw unreachableError(connection.url, error);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidResponseError(
      connection.url,
      `a body that is not JSON (${request.method} ${request.path.split('?')[0]})`,
    );
  }
}

/** A GET whose answer is bytes (a blob): the body and its Content-Type, or an AgentError. */
export async function readBytes(
  connection: DaemonConnection,
  path: string,
): Promise<{ contentType: string; bytes: Uint8Array }> {
  const response = await fetchAnswer(connection, { method: 'GET', path }, '*/*');
  try {
    return {
      contentType: response.headers.get('content-type') ?? '',
      bytes: new Uint8Array(await response.arrayBuffer()),
    };
  } catch (error) {
    throw unreachableError(connection.url, error);
  }
}
