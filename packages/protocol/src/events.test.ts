import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { type EventBody, ProtocolEvent, eventBodySchema, protocolEventTypes } from './events.js';

describe('protocol events', () => {
  it('lists every event type with a noun.verb name', () => {
    expect(protocolEventTypes).toContain('run.completed');
    for (const type of protocolEventTypes) expect(type).toMatch(/^([a-z]+\.[a-z_]+|diagnostic)$/);
  });

  it('validates an event with its envelope and rejects unknown fields', () => {
    const event = {
      type: 'run.message_delta',
      sessionId: `ses_${'b'.repeat(32)}`,
      seq: 3,
      at: '2026-11-29T00:00:00.000Z',
      runId: `run_${'c'.repeat(32)}`,
      blockId: 'm:0',
      text: 'hi',
    };
    expect(ProtocolEvent.parse(event)).toEqual(event);
    expect(ProtocolEvent.safeParse({ ...event, surprise: true }).success).toBe(false);
    expect(ProtocolEvent.safeParse({ ...event, seq: 0 }).success).toBe(false);
  });

  it('has a body schema per event type: the event without its envelope, as strict as the event', () => {
    const body = { type: 'run.message_delta', runId: `run_${'c'.repeat(32)}`, blockId: 'm:0', text: 'hi' };
    const schema = eventBodySchema('run.message_delta')!;
    expect(schema.parse(body)).toEqual(body);
    // The log gives the envelope; a body that brings its own is refused.
    expect(schema.safeParse({ ...body, seq: 3 }).success).toBe(false);
    expect(schema.safeParse({ ...body, text: 3 }).success).toBe(false);
    expect(eventBodySchema('run.exploded')).toBeUndefined();
    for (const type of protocolEventTypes) expect(eventBodySchema(type)).toBeDefined();
  });

  it('keeps the TypeScript types and the schema in step', () => {
    expectTypeOf<z.infer<typeof ProtocolEvent>>().toEqualTypeOf<ProtocolEvent>();
    expectTypeOf<Extract<EventBody, { type: 'run.completed' }>>().toHaveProperty('outcome');
    expectTypeOf<Extract<EventBody, { type: 'run.completed' }>>().not.toHaveProperty('seq');
  });
});
