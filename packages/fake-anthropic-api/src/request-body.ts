/** Reads and parses a request body (JSON, possibly compressed). */
import type { IncomingMessage } from 'node:http';
import * as zlib from 'node:zlib';

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const encoding = (req.headers['content-encoding'] ?? '').toLowerCase().trim();
  if (encoding === 'gzip') return zlib.gunzipSync(raw);
  if (encoding === 'deflate') return zlib.inflateSync(raw);
  if (encoding === 'br') return zlib.brotliDecompressSync(raw);
  // zstd exists from Node 22.15 / 23.8 only.
  const zstd = (zlib as { zstdDecompressSync?: (data: Buffer) => Buffer }).zstdDecompressSync;
  if (encoding === 'zstd' && zstd !== undefined) return zstd(raw);
  return raw;
}

/** `{ ok: true, value }` for valid JSON (or an empty body as `undefined`), `{ ok: false }` otherwise. */
export function parseJson(raw: Buffer): { ok: true; value: unknown } | { ok: false; error: string } {
  if (raw.length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Lower-case header names; repeated headers joined with ', '. */
export function flattenHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
