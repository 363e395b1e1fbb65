import {
  AgentError,
  type ControlName,
  type EventBody,
  type GetContextUsageCommand,
  type GetSessionCostCommand,
  type Receipt,
  type RunControlCommand,
  type SetModelCommand,
  newRunId,
} from '@tether/protocol';
import type { AgentProviderV1, AgentProviderV1Session } from '@tether/provider-spec';
import { isRefusal } from '../state/refusal.js';
import { decideRunControl } from '../state/session-machine.js';
import type { SessionEntry } from './session-entry.js';

/** What the control commands need from the runtime. */
export interface ControlContext {
  entry(sessionId: string): SessionEntry | undefined;
  write(entry: SessionEntry, bodies: readonly EventBody[], receipt: Receipt, fingerprint: string): Promise<void>;
  providerSession(entry: SessionEntry): Promise<AgentProviderV1Session>;
  /** Starts a run's provider work in the background; a failure to start fails the run. */
  startRun(entry: SessionEntry, runId: string, work: (session: AgentProviderV1Session) => Promise<void>): void;
}

function openEntry(context: ControlContext, sessionId: string): SessionEntry {
  const entry = context.entry(sessionId);
  if (!entry) throw new AgentError({ code: 'session_not_found', message: 'No session has that id. Check the id, or open a new session with open_session.' });
  if (entry.record.state === 'closed') {
    throw new AgentError({ code: 'session_closed', message: 'The session is closed. Reopen it with open_session and continueSession first.' });
  }
  return entry;
}

function requireCapability(provider: AgentProviderV1 | null, available: boolean, what: string, reason: string): void {
  if (provider && !available) {
    throw new AgentError({ code: 'capability_unsupported', message: `The ${provider.name} provider cannot ${what}.`, details: { reason } });
  }
}

export async function runControl(context: ControlContext, command: RunControlCommand, fingerprint: string): Promise<Receipt> {
  const entry = context.entry(command.sessionId);
  if (entry) requireCapability(entry.provider, entry.provider?.capabilities.controls ?? true, 'run controls (slash commands)', 'controls');
  const decision = decideRunControl(entry?.record, command, { newRunId });
  if (isRefusal(decision)) throw decision.refusal;
  const runId = decision.runId;
  const receipt: Receipt = { type: 'run_control', commandId: command.commandId, sessionId: command.sessionId, runId };
  await context.write(entry!, decision.events, receipt, fingerprint);
  const unsupported = decision.events.some((event) => event.type === 'run.completed');
  if (!unsupported) {
    const name = command.name as ControlName;
    context.startRun(entry!, runId, (session) => session.doControl({ runId, name, ...(command.argument !== undefined ? { argument: command.argument } : {}) }));
  }
  return receipt;
}

export async function setModel(context: ControlContext, command: SetModelCommand, fingerprint: string): Promise<Receipt> {
  const entry = openEntry(context, command.sessionId);
  requireCapability(entry.provider, entry.provider?.capabilities.setModel ?? true, 'change the model of a running session', 'set_model');
  const session = await context.providerSession(entry);
  const model = await session.doSetModel(command.model);
  const changed = model !== entry.record.model || entry.record.configuration.model !== model;
  const receipt: Receipt = { type: 'set_model', commandId: command.commandId, sessionId: command.sessionId, model };
  await context.write(entry, changed ? [{ type: 'session.model_changed', model, source: 'command' }] : [], receipt, fingerprint);
  return receipt;
}

export async function getContextUsage(context: ControlContext, command: GetContextUsageCommand, fingerprint: string): Promise<Receipt> {
  const entry = openEntry(context, command.sessionId);
  requireCapability(entry.provider, entry.provider?.capabilities.controls ?? true, 'report context usage', 'context_usage');
  const usage = await (await context.providerSession(entry)).doGetContextUsage();
  const receipt: Receipt = { type: 'get_context_usage', commandId: command.commandId, sessionId: command.sessionId, usage };
  await context.write(entry, [], receipt, fingerprint);
  return receipt;
}

export async function getSessionCost(context: ControlContext, command: GetSessionCostCommand, fingerprint: string): Promise<Receipt> {
  const entry = openEntry(context, command.sessionId);
  const capabilities = entry.provider?.capabilities;
  requireCapability(entry.provider, capabilities?.sessionCost ?? capabilities?.usage ?? true, 'report its own session cost (get_session_cost)', 'session_cost');
  const { report } = await (await context.providerSession(entry)).doGetSessionCost();
  const receipt: Receipt = {
    type: 'get_session_cost',
    commandId: command.commandId,
    sessionId: command.sessionId,
    costUsd: entry.record.usage.costUsd,
    report: report.slice(0, 10_000),
  };
  await context.write(entry, [], receipt, fingerprint);
  return receipt;
}
