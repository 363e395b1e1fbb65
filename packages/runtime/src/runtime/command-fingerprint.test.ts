import type { Command } from '@tether/protocol';
import { expect, it } from 'vitest';
import { fingerprintCommand } from './command-fingerprint.js';

const sessionId = `ses_${'1'.repeat(32)}`;

// Receipts keep these: a command retried after an upgrade must fingerprint as it did when it was
// first stored, or it is refused as a reused commandId. The values were computed by the first
// implementation (canonical JSON by sorted entries, then SHA-256).
it('fingerprints commands as receipts stored by earlier versions have them', () => {
  const samples: [unknown, string][] = [
    [
      { type: 'submit_turn', commandId: 'cmd-1', sessionId, input: [{ type: 'text', text: 'Hello, "world" ü 😀\n' }] },
      '3ac61c52125bbe24b831918f930654d82f1ca331a6d49083c98a425297e9b2e5',
    ],
    [
      { type: 'interrupt_run', commandId: 'cmd-2', sessionId, runId: `run_${'2'.repeat(32)}`, cancelQueued: undefined },
      '89846501ec86ca4d14e004c2bee89b82851e3a33d18155908cc712546a68cb1d',
    ],
    [
      {
        type: 'open_session',
        commandId: 'cmd-3',
        workspace: { kind: 'directory', path: '/work/p' },
        configuration: {
          model: 'sonnet',
          env: { B: '2', A: '1', Ä: 'x', a: 'y' },
          maxTurns: 3,
          tags: [1, null, 'x', { z: 1, y: [true, false] }],
        },
      },
      'e66256286599bec47990736b0747b71ed749cb47a0ef7fd7f9fb34429d044f3a',
    ],
  ];
  for (const [command, fingerprint] of samples) expect(fingerprintCommand(command as Command)).toBe(fingerprint);
});

it('leaves out the commandId and only the top-level one', () => {
  const command = { type: 'submit_turn', commandId: 'a', sessionId, input: [{ type: 'text', text: 'x' }] } as Command;
  expect(fingerprintCommand({ ...command, commandId: 'b' })).toBe(fingerprintCommand(command));
  const nested = { ...command, input: [{ type: 'text', text: 'x', commandId: 'inner' }] } as unknown as Command;
  expect(fingerprintCommand(nested)).not.toBe(fingerprintCommand(command));
});
