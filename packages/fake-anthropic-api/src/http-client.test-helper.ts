/** Test-only: plain fetch calls against the fake and an SSE parser. */

export interface ParsedSseEvent {
  event: string;
  data: any;
}

export function messagesBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'claude-test-model',
    max_tokens: 1024,
    stream: true,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    ...overrides,
  };
}

export function postMessages(baseUrl: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${baseUrl}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
    ...init,
  });
}

export function parseSse(text: string): ParsedSseEvent[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const lines = chunk.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length) ?? '';
      const data = lines.find((line) => line.startsWith('data: '))?.slice('data: '.length) ?? 'null';
      return { event, data: JSON.parse(data) };
    });
}

/** Reads an SSE body until it ends (or fails); returns the events and the error, if any. */
export async function readSse(response: Response): Promise<{ events: ParsedSseEvent[]; error: unknown }> {
  let text = '';
  let error: unknown;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
      text += Buffer.from(chunk).toString('utf8');
  } catch (caught) {
    error = caught;
  }
  const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
  return { events: parseSse(complete), error };
}

/** Reads SSE events until `predicate` matches one; leaves the stream open. */
export async function readSseUntil(
  response: Response,
  predicate: (event: ParsedSseEvent) => boolean,
): Promise<ParsedSseEvent[]> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before the expected event; got: ${text}`);
    text += Buffer.from(value).toString('utf8');
    const events = parseSse(text.slice(0, text.lastIndexOf('\n\n') + 2));
    if (events.some(predicate)) {
      reader.releaseLock();
      return events;
    }
  }
}
