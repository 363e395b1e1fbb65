import { expect, it } from 'vitest';
import { client, openSession } from '../daemon/daemon-test-helpers.js';
import { browserSuite, describeInBrowser } from './browser-harness.js';

describeInBrowser('the web UI: a long session list in a real browser', () => {
  const suite = browserSuite();

  it('lists the newest sessions first and the older ones on asking, however many there are', async () => {
    const api = client(suite.daemon);
    const close = (sessionId: string) => api.command({ type: 'close_session', sessionId });
    const oldest = await openSession(api, suite.environment.workspace);
    await close(oldest);
    // A page of the list is 200 sessions: these push the oldest onto the second.
    for (let index = 0; index < 200; index += 1) await close(await openSession(api, suite.environment.workspace));

    const page = await suite.connectedPage();
    const sessions = page.getByRole('navigation', { name: 'Sessions' });
    const older = sessions.getByRole('button', { name: 'Show older sessions' });
    await older.waitFor();
    expect(await sessions.getByRole('link').count()).toBe(200);
    expect(await sessions.locator(`a[href="/sessions/${oldest}"]`).count()).toBe(0);

    await older.click();
    await sessions.locator(`a[href="/sessions/${oldest}"]`).waitFor();
    expect(await sessions.getByRole('link').count()).toBe(201);
    await older.waitFor({ state: 'detached' });
  });
});
