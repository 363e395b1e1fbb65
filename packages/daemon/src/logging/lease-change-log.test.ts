import { describe, expect, it } from 'vitest';
import type { DaemonLogger } from './create-logger.js';
import { logLeaseChange } from './lease-change-log.js';

function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; message: string | undefined }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message?: string): void => {
      lines.push({ level, fields, message });
    };
  const logger: DaemonLogger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}

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
