import { describe, expect, it } from 'vitest';
import { pushPlaintext } from './push-sender.js';
import { maxPushPlaintextBytes } from './web-push-encryption.js';

const links = { open: 'https://tether.example/sessions/ses_1', approve: 'https://tether.example/v1/links/a' };

describe('a push message body', () => {
  it('is the notification JSON as it is when it fits', () => {
    const body = JSON.stringify({ kind: 'run_completed', session: { title: 'T', workspacePath: '/w' }, links });
    expect(pushPlaintext(body).toString('utf8')).toBe(body);
  });

  it('drops the questions and the path first when it does not fit, and keeps the links', () => {
    const questions = Array.from({ length: 10 }, () => ({ header: 'H', question: 'q'.repeat(500), options: [] }));
    const body = JSON.stringify({
      kind: 'interaction_requested',
      session: { title: 'A title', workspacePath: '/w'.repeat(100) },
      interaction: { ref: 'int_1', kind: 'question_set', questions },
      links,
    });
    const plaintext = pushPlaintext(body);
    expect(plaintext.length).toBeLessThanOrEqual(maxPushPlaintextBytes);
    expect(JSON.parse(plaintext.toString('utf8'))).toEqual({
      kind: 'interaction_requested',
      session: { title: 'A title', workspacePath: null },
      interaction: { ref: 'int_1', kind: 'question_set' },
      links,
      truncated: true,
    });
  });
});
