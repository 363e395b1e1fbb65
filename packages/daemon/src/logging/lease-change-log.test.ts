import { describe, expect, it } from 'vitest';
import { recordingLogger } from '@tether/testkit';
import { logLeaseChange } from './lease-change-log.js';

const first = `ses_${'a'.repeat(32)}`;
const second = `ses_${'b'.repeat(32)}`;

describe("the daemon's log of sessions changing hands", () => {
  it('writes a warning per lost session, naming how the loss was noticed', () => {
    const { logger, lines } = recordingLogger();
    logLeaseChange(logger)({ change: 'lost', sessionIds: [first, second], noticedBy: 'refused_commit' });
    expect(lines).toEqual([
      { level: 'warn', fields: { sessionId: first, noticedBy: 'refused_commit' }, message: expect.any(String) },
      { level: 'warn', fields: { sessionId: second, noticedBy: 'refused_commit' }, message: expect.any(String) },
    ]);
    expect(lines[0]?.message).toContain('another daemon');
  });

  it('writes an info line for an adopted session', () => {
    const { logger, lines } = recordingLogger();
    logLeaseChange(logger)({ change: 'adopted', sessionId: first });
    expect(lines).toEqual([{ level: 'info', fields: { sessionId: first }, message: expect.any(String) }]);
    expect(lines[0]?.message).toContain('took over');
  });
});
