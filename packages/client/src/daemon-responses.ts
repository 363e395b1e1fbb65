import { Receipt, SerializedAgentError, SessionSnapshot } from '@tether/protocol';
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

/** What a provider can do (mirrors the provider contract; the client may not import it). */
export interface ProviderCapabilities {
  readonly resume: boolean;
  readonly interrupt: boolean;
  readonly approvals: boolean;
  readonly questions: boolean;
  readonly controls: boolean;
  readonly usage: boolean;
  readonly setModel: boolean;
  readonly setMode: boolean;
  readonly fork: boolean;
  readonly rollback: boolean;
  readonly inputParts: readonly string[];
}

export interface ProviderAvailability {
  readonly available: boolean;
  readonly binaryPath?: string;
  readonly source?: string;
  readonly version?: string;
  /** Why it is not available, with what to do. */
  readonly problem?: SerializedAgentError;
}

export interface ProviderInfo {
  readonly name: string;
  readonly capabilities: ProviderCapabilities;
  readonly availability: ProviderAvailability;
}

export interface DaemonHealth {
  readonly ok: true;
  readonly version: string;
}

const capabilityFlags = ['resume', 'interrupt', 'approvals', 'questions', 'controls', 'usage', 'setModel', 'setMode', 'fork', 'rollback'] as const;

type Fields = Record<string, unknown>;

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

export function parseReceipt(url: string, commandType: CommandType, body: unknown): Receipt {
  const parsed = Receipt.safeParse(body);
  if (!parsed.success) throw invalidResponseError(url, `a receipt for ${commandType}`, parsed.error);
  if (parsed.data.type !== commandType) throw invalidResponseError(url, `a ${parsed.data.type} receipt for a ${commandType} command`);
  return parsed.data;
}

export function parseSnapshot(url: string, body: unknown): SessionSnapshot {
  const parsed = SessionSnapshot.safeParse(body);
  if (!parsed.success) throw invalidResponseError(url, 'a session snapshot', parsed.error);
  return parsed.data;
}

export function parseSessionPage(url: string, body: unknown): SessionPage {
  if (!isFields(body) || !Array.isArray(body.sessions) || !(body.next === null || typeof body.next === 'string')) {
    throw invalidResponseError(url, 'a session list');
  }
  return { sessions: body.sessions.map((item) => parseSnapshot(url, item)), next: body.next };
}

function parseAvailability(url: string, value: unknown): ProviderAvailability {
  if (
    !isFields(value) ||
    typeof value.available !== 'boolean' ||
    !isOptionalString(value.binaryPath) ||
    !isOptionalString(value.source) ||
    !isOptionalString(value.version)
  ) {
    throw invalidResponseError(url, "a provider's availability");
  }
  let problem: SerializedAgentError | undefined;
  if (value.problem !== undefined) {
    const parsed = SerializedAgentError.safeParse(value.problem);
    if (!parsed.success) throw invalidResponseError(url, "a provider's problem", parsed.error);
    problem = parsed.data;
  }
  return {
    available: value.available,
    ...(typeof value.binaryPath === 'string' ? { binaryPath: value.binaryPath } : {}),
    ...(typeof value.source === 'string' ? { source: value.source } : {}),
    ...(typeof value.version === 'string' ? { version: value.version } : {}),
    ...(problem ? { problem } : {}),
  };
}

function parseCapabilities(url: string, value: unknown): ProviderCapabilities {
  if (!isFields(value)) throw invalidResponseError(url, "a provider's capabilities");
  const inputParts = value.inputParts;
  const flagsValid = capabilityFlags.every((flag) => typeof value[flag] === 'boolean');
  if (!flagsValid || !Array.isArray(inputParts) || !inputParts.every((part) => typeof part === 'string')) {
    throw invalidResponseError(url, "a provider's capabilities");
  }
  const flags = Object.fromEntries(capabilityFlags.map((flag) => [flag, value[flag] as boolean])) as Record<(typeof capabilityFlags)[number], boolean>;
  return { ...flags, inputParts: [...(inputParts as string[])] };
}

export function parseProviders(url: string, body: unknown): ProviderInfo[] {
  if (!isFields(body) || !Array.isArray(body.providers)) throw invalidResponseError(url, 'a provider list');
  return body.providers.map((item: unknown) => {
    if (!isFields(item) || typeof item.name !== 'string') throw invalidResponseError(url, 'a provider');
    return { name: item.name, capabilities: parseCapabilities(url, item.capabilities), availability: parseAvailability(url, item.availability) };
  });
}

export function parseHealth(url: string, body: unknown): DaemonHealth {
  if (!isFields(body) || body.ok !== true || typeof body.version !== 'string') throw invalidResponseError(url, 'a health answer');
  return { ok: true, version: body.version };
}
