import { describe, expect, it } from 'vitest';
import { initializeResponseOf } from './initialize-response.js';

const claude = { images: true, resume: true };

describe('initialize', () => {
  it('speaks the client version it knows and advertises only what works', () => {
    expect(initializeResponseOf({ protocolVersion: 1 }, claude, '0.1.0')).toEqual({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, close: {}, resume: {} },
      },
      agentInfo: { name: 'tether', title: 'Tether', version: '0.1.0' },
      authMethods: [],
    });
  });

  it('answers a version it does not speak with its own, and leaves out images and resume where the provider has none', () => {
    const response = initializeResponseOf({ protocolVersion: 7 }, { ...claude, images: false, resume: false }, '0.1.0');
    expect(response.protocolVersion).toBe(1);
    expect(response.agentCapabilities?.promptCapabilities?.image).toBe(false);
    expect(response.agentCapabilities?.sessionCapabilities).toEqual({ list: {}, close: {} });
  });
});
