import {
  DeletedSession,
  ImageMediaType,
  ModelList,
  ProviderDescription,
  Receipt,
  SessionDiff,
  SessionSnapshot,
  type StoredBlob,
} from '@tether/protocol';
import type { CommandType } from '@tether/protocol';
import { invalidResponseError } from './client-errors.js';

/*
 * Everything the daemon answers is checked before a caller sees it: for a browser app the daemon is
 * a trust boundary. Items use the protocol's own schemas; the small envelopes around them are
 * checked by hand, so the client needs no zod import of its own.
 */

/** One page of GET /v1/sessions, newest first; `next` is the cursor for the following page. */
export interface SessionPage {
  readonly sessions: SessionSnapshot[];
  readonly next: string | null;
}

/** A provider as the daemon describes it (the protocol's shape). */
export type ProviderInfo = ProviderDescription;

/** What the daemon's store reports when it cannot work (the body of /health's 503). */
export interface DaemonStoreHealth {
  readonly kind: string;
  readonly reason?: string;
  readonly cause?: string;
  readonly message?: string;
  readonly since?: string;
}

/** A daemon is there (either way), of this version; ok false: its store cannot reach its database. */
export type DaemonHealth =
  | { readonly ok: true; readonly version: string }
  | { readonly ok: false; readonly version: string; readonly store: DaemonStoreHealth };

type Fields = Record<string, unknown>;

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseReceipt(url: string, commandType: CommandType, body: unknown): Receipt {
  const parsed = Receipt.safeParse(body);
  if (!parsed.success) throw invalidResponseError(url, `a receipt for ${commandType}`, parsed.error);
  if (parsed.data.type !== commandType)
    throw invalidResponseError(url, `a ${parsed.data.type} receipt for a ${commandType} command`);
  return parsed.data;
}

export function parseSnapshot(url: string, body: unknown): SessionSnapshot {
  const parsed = SessionSnapshot.safeParse(body);
  if (!parsed.success) throw invalidResponseError(url, 'a session snapshot', parsed.error);
  return parsed.data;
}

export function parseSessionDiff(url: string, body: unknown): SessionDiff {
  const parsed = SessionDiff.safeParse(body);
  if (!parsed.success) throw invalidResponseError(url, 'a session diff', parsed.error);
  return parsed.data;
}

export function parseDeletedSession(url: string, body: unknown): DeletedSession {
  const parsed = DeletedSession.safeParse(body);
  if (!parsed.success) throw invalidResponseError(url, 'what a delete left of the session', parsed.error);
  return parsed.data;
}

export function parseSessionPage(url: string, body: unknown): SessionPage {
  if (!isFields(body) || !Array.isArray(body.sessions) || !(body.next === null || typeof body.next === 'string')) {
    throw invalidResponseError(url, 'a session list');
  }
  return { sessions: body.sessions.map((item) => parseSnapshot(url, item)), next: body.next };
}

export function parseProviders(url: string, body: unknown): ProviderInfo[] {
  if (!isFields(body) || !Array.isArray(body.providers)) throw invalidResponseError(url, 'a provider list');
  return body.providers.map((item: unknown) => {
    const parsed = ProviderDescription.safeParse(item);
    if (!parsed.success) throw invalidResponseError(url, 'a provider');
    return parsed.data;
  });
}

export function parseHealth(url: string, body: unknown): DaemonHealth {
  if (!isFields(body) || typeof body.ok !== 'boolean' || typeof body.version !== 'string')
    throw invalidResponseError(url, 'a health answer');
  if (body.ok) return { ok: true, version: body.version };
  if (!isFields(body.store) || typeof body.store.kind !== 'string') throw invalidResponseError(url, 'a health answer');
  const store: Record<string, string> = { kind: body.store.kind };
  for (const field of ['reason', 'cause', 'message', 'since'] as const) {
    const value = body.store[field];
    if (typeof value === 'string') store[field] = value;
  }
  return { ok: false, version: body.version, store: store as unknown as DaemonStoreHealth };
}

export function parseModelList(url: string, body: unknown): ModelList {
  const parsed = ModelList.safeParse(body);
  if (!parsed.success) throw invalidResponseError(url, 'a model list', parsed.error);
  return parsed.data;
}

/** A blob's answer: image bytes under an image type Tether stores (anything else is not what the daemon keeps). */
export function parseBlob(url: string, answer: { contentType: string; bytes: Uint8Array }): StoredBlob {
  const mediaType = ImageMediaType.safeParse(answer.contentType.split(';')[0]!.trim().toLowerCase());
  if (!mediaType.success) throw invalidResponseError(url, 'a blob that is not an image');
  return { mediaType: mediaType.data, bytes: answer.bytes };
}
