import { describe, expect, it } from 'vitest';
import { OneTimeLinks, linkTokenPattern } from './one-time-links.js';

const target = { sessionId: 'ses_1', interactionRef: 'int_1', tool: 'Bash', summary: 'List files', action: 'ls' };

describe('one-time links', () => {
  it('a token answers once: using it voids it and every other link of its interaction', () => {
    const links = new OneTimeLinks(60_000);
    const approve = links.mint(target, 'approve');
    const deny = links.mint(target, 'deny');
    const other = links.mint({ ...target, interactionRef: 'int_2' }, 'approve');
    expect(approve).toMatch(linkTokenPattern);
    expect(links.peek(approve)).toMatchObject({ ...target, choice: 'approve' });
    expect(links.peek(approve)).not.toBeNull();

    expect(links.take(deny)).toMatchObject({ choice: 'deny', interactionRef: 'int_1' });
    expect(links.take(deny)).toBeNull();
    expect(links.take(approve)).toBeNull();
    expect(links.peek(other)).toMatchObject({ interactionRef: 'int_2' });
  });

  it('expires, and is void once its interaction is dropped', () => {
    let now = 1_000;
    const links = new OneTimeLinks(5_000, () => now);
    const expiring = links.mint(target, 'approve');
    const dropped = links.mint({ ...target, interactionRef: 'int_2' }, 'deny');
    now += 4_999;
    expect(links.peek(expiring)).not.toBeNull();
    links.drop('int_2');
    expect(links.take(dropped)).toBeNull();
    now += 1;
    expect(links.take(expiring)).toBeNull();
    expect(links.size).toBe(0);
  });

  it('keeps only hashes of 256-bit tokens, and ignores anything not shaped like one', () => {
    const links = new OneTimeLinks(60_000);
    const tokens = new Set(Array.from({ length: 50 }, () => links.mint(target, 'approve')));
    expect(tokens.size).toBe(50);
    for (const token of tokens) expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    // Nothing the registry holds is a token.
    expect(JSON.stringify([...(links as unknown as { grants: Map<string, unknown> }).grants.keys()])).not.toContain(
      [...tokens][0],
    );
    expect(links.peek('../../v1/sessions')).toBeNull();
    expect(links.take('')).toBeNull();
  });
});
