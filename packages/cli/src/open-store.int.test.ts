import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TetherStore } from '@tether/runtime';
import { agentErrorOf, startTestPostgres, type TestPostgres } from '@tether/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StoreLocation } from './commands/store-option.js';
import { openStore } from './open-store.js';
import { ownerIdFileName } from './store-owner-id.js';

// The CLI's store on PostgreSQL, opened for two data dirs the way `tether serve` opens it.
let postgres: TestPostgres | undefined;
beforeAll(async () => {
  postgres = await startTestPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

const opened: TetherStore[] = [];
let root = '';
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
  if (root) await rm(root, { recursive: true, force: true });
  root = '';
});

const sessionId = `ses_${'e'.repeat(32)}`;

describe('openStore on PostgreSQL', () => {
  it("refuses a data dir holding a copy of a running daemon's store-owner-id, and leaves that daemon its sessions and address", async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'tether-owner-copy-'));
    const url = await postgres!.createDatabase();
    const password = new URL(url).password;
    const location: StoreLocation = { kind: 'postgres', url, description: 'the test database', secrets: [password] };
    const first = path.join(root, 'first');
    const copy = path.join(root, 'copy');
    const other = path.join(root, 'other');
    for (const directory of [first, copy, other]) await mkdir(directory);

    const live = await openStore(first, location, { leaseTtlMs: 3_000 });
    opened.push(live);
    await live.coordination!.advertise('http://first.test:7437');
    await live.coordination!.claim(sessionId);
    await copyFile(path.join(first, ownerIdFileName), path.join(copy, ownerIdFileName));

    const refusal = await agentErrorOf(openStore(copy, location, { leaseTtlMs: 3_000 }));
    expect(refusal).toMatchObject({ code: 'store_failure', details: { reason: 'owner_id_in_use' } });
    expect(refusal.message).toContain('store-owner-id');
    expect(refusal.message).not.toContain(password);
    // The first still holds its session, under the address it advertised.
    const elsewhere = await openStore(other, location, { leaseTtlMs: 3_000 });
    opened.push(elsewhere);
    expect(await elsewhere.coordination!.claim(sessionId)).toEqual({
      status: 'held_elsewhere',
      holder: { ownerId: live.coordination!.ownerId, address: 'http://first.test:7437' },
    });

    // Once the first has stopped, the copy's data dir opens (its lock was given back) as that owner.
    await live.close();
    const successor = await openStore(copy, location, { leaseTtlMs: 3_000 });
    opened.push(successor);
    expect(successor.coordination!.ownerId).toBe(live.coordination!.ownerId);
  });
});
