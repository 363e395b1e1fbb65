import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { type EventBody, ProtocolEvent, protocolEventTypes } from './events.js';

describe('protocol events', () => {
  it('lists every event type with a noun.verb name', () => {
    expect(protocolEventTypes).toContain('run.completed');
    for (const type of protocolEventTypes) expect(type).toMatch(/^([a-z]+\.[a-z_]+|diagnostic)$/);
  });

  it('validates an event with its envelope and rejects unknown fields', () => {
    const event = { type: 'run.message_delta', sessionId: `ses_${'b'.repeat(32)}`, seq: 3, at: '2026-11-29T00:00:00.000Z', runId: `run_${'c'.repeat(32)}`, blockId: 'm:0', text: 'hi' };
    expect(ProtocolEvent.parse(event)).toEqual(event);
    expect(ProtocolEvent.safeParse({ ...event, surprise: true }).success).toBe(false);
    expect(ProtocolEvent.safeParse({ ...event, seq: 0 }).success).toBe(false);
  });

  it('keeps the TypeScript types and the schema in step', () => {
    expectTypeOf<z.infer<typeof ProtocolEvent>>().toEqualTypeOf<ProtocolEvent>();
    expectTypeOf<Extract<EventBody, { type: 'run.completed' }>>().toHaveProperty('outcome');
    expectTypeOf<Extract<EventBody, { type: 'run.completed' }>>().not.toHaveProperty('seq');
  });
});
