import { describe, expect, it } from 'vitest';
import { useTestDaemon } from '../test-daemon.test-helper.js';

const startTestDaemon = useTestDaemon();

describe("the daemon's log of requests without a valid token", () => {
  it('writes the first refusal, then one line counting the rest, with no token or path in it', async () => {
    const { daemon, lines } = await startTestDaemon();
    const badToken = `${daemon.token}-WRONG`;
    for (let index = 0; index < 100; index += 1) {
      const response = await fetch(`${daemon.url}/v1/sessions/secret-path-${index}?also=secret-query`, {
        headers: { authorization: `Bearer ${badToken}` },
      });
      expect(response.status).toBe(401);
    }
    // A request with the token is logged as ever.
    const allowed = await fetch(`${daemon.url}/v1/sessions`, { headers: { authorization: `Bearer ${daemon.token}` } });
    expect(allowed.status).toBe(200);
    // The count of the refusals held back is written at shutdown at the latest.
    await daemon.close();

    const refusals = lines.filter((line) => line.fields['status'] === 401);
    expect(refusals).toEqual([
      {
        level: 'info',
        fields: expect.objectContaining({ status: 401, route: '/v1/sessions/:id', errorCode: 'unauthorized' }),
        message: 'request',
      },
      {
        level: 'warn',
        fields: {
          status: 401,
          errorCode: 'unauthorized',
          refused: 99,
          since: expect.any(String),
          until: expect.any(String),
        },
        message: expect.stringContaining('99 more requests refused'),
      },
    ]);
    expect(lines.some((line) => line.fields['status'] === 200 && line.fields['route'] === '/v1/sessions')).toBe(true);
    const written = JSON.stringify(lines);
    expect(written).not.toContain(badToken);
    expect(written).not.toContain('secret-path');
    expect(written).not.toContain('secret-query');
  });
});
