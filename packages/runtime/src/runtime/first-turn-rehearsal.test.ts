import { parseCommand } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { rehearsedCommands, rehearsedParts } from './first-turn-rehearsal.js';
import { refusedPartType } from './provider-part-check.js';

// A sample the checks refuse would still be cheap to run, but it would no longer rehearse the path a real one takes.
describe('the samples the runtime runs through its checks as it starts', () => {
  it('are commands the protocol accepts, of the kinds a first turn takes', () => {
    const parsed = rehearsedCommands.map((command) => parseCommand(command));
    expect(parsed.map((command) => command.type)).toEqual(['open_session', 'submit_turn', 'interrupt_run']);
  });

  it('are agent output the runtime would store', () => {
    expect(rehearsedParts.map((part) => refusedPartType(part))).toEqual(rehearsedParts.map(() => null));
  });
});
