import { type ControlName, type RunControlCommand, type RunControlReceipt, newRunId } from '@tether/protocol';
import { decideRunControl } from '../../state/session-machine.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** A control (slash command) as a run of its own; one Tether does not know completes at once, unsupported. */
export async function runControl(
  context: CommandContext,
  command: RunControlCommand,
  fingerprint: CommandFingerprint,
): Promise<RunControlReceipt> {
  const found = context.entries.get(command.sessionId);
  if (found) requireCapability(found.provider, (can) => can.controls, 'run controls (slash commands)', 'controls');
  const { entry, decision } = accepted(found, decideRunControl(found?.record, command, { newRunId }));
  const { runId } = decision;
  const receipt: RunControlReceipt = {
    type: 'run_control',
    commandId: command.commandId,
    sessionId: command.sessionId,
    runId,
  };
  await context.write(entry, decision.events, receipt, fingerprint);
  const unsupported = decision.events.some((event) => event.type === 'run.completed');
  if (!unsupported) {
    const name = command.name as ControlName;
    context.startRun(entry, runId, (session) =>
      session.doControl({ runId, name, ...(command.argument !== undefined ? { argument: command.argument } : {}) }),
    );
  }
  return receipt;
}
