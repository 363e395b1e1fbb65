import type { AgentProviderV1Part } from '@tether/provider-spec';
import { describe, expect, it } from 'vitest';
import type { ClaudeConnection, ClaudeControlRequest } from '../connection/claude-connection.js';
import { SessionReports } from './session-reports.js';

const apiKeyUsage = { session: {}, subscription_type: null, rate_limits_available: false, rate_limits: null };

/** A connection that answers get_usage and get_context_usage, recording what it was asked. */
function connection(answers: Partial<Record<ClaudeControlRequest['subtype'], unknown>>) {
  const asked: ClaudeControlRequest[] = [];
  const agent = {
    running: true,
    request: async (request: ClaudeControlRequest) => {
      asked.push(request);
      if (!(request.subtype in answers)) throw new Error('refused');
      return answers[request.subtype];
    },
  } as unknown as ClaudeConnection;
  return { agent, asked };
}

function reportsOf(current: () => ClaudeConnection | null) {
  const parts: AgentProviderV1Part[] = [];
  return { parts, reports: new SessionReports({ emit: (part) => parts.push(part), current }) };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('SessionReports', () => {
  it('asks get_usage once per agent process and reports a changed answer only', async () => {
    const first = connection({ get_usage: apiKeyUsage });
    const second = connection({ get_usage: apiKeyUsage });
    let current: ClaudeConnection = first.agent;
    const { parts, reports } = reportsOf(() => current);
    reports.askLimits(first.agent);
    reports.askLimits(first.agent);
    await settled();
    current = second.agent;
    reports.askLimits(second.agent);
    await settled();
    expect(first.asked).toEqual([{ subtype: 'get_usage', skip_behaviors: true }]);
    expect(second.asked).toHaveLength(1);
    expect(parts).toMatchObject([
      { type: 'session.limits_changed', limits: { available: false, unavailableReason: 'api_key_account' } },
    ]);
  });

  it('keeps one window per rate_limit_event type, and a late get_usage answer does not overwrite them', async () => {
    const { agent } = connection({ get_usage: apiKeyUsage });
    const { parts, reports } = reportsOf(() => agent);
    reports.askLimits(agent);
    const event = (rateLimitType: string, utilization: number) => ({
      type: 'rate_limit_event' as const,
      rate_limit_info: { status: 'allowed', rateLimitType, utilization },
    });
    reports.onRateLimitEvent(event('five_hour', 0.5));
    reports.onRateLimitEvent(event('five_hour', 0.5));
    reports.onRateLimitEvent(event('seven_day', 0.1));
    await settled();
    const windows = parts.map((part) =>
      part.type === 'session.limits_changed' ? part.limits.windows.map((window) => window.window) : [],
    );
    expect(windows).toEqual([['five_hour'], ['five_hour', 'seven_day']]);
  });

  it('measures the context after a run; nothing when no agent runs, the agent changed, or it refused', async () => {
    const usage = { model: 'm', totalTokens: 10, maxTokens: 100, percentage: 10, categories: [] };
    const { agent, asked } = connection({ get_context_usage: usage });
    let current: ClaudeConnection | null = agent;
    const { parts, reports } = reportsOf(() => current);
    reports.measureContext();
    await settled();
    expect(asked).toEqual([{ subtype: 'get_context_usage', detail: 'summary' }]);
    expect(parts).toEqual([{ type: 'session.context_measured', contextUsage: usage }]);
    reports.measureContext();
    current = null;
    await settled();
    reports.measureContext();
    const refusing = connection({});
    current = refusing.agent;
    reports.measureContext();
    await settled();
    expect(parts).toHaveLength(1);
  });
});
