import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { expect, it } from 'vitest';
import { describeTransports, turnRequests } from './conformance-harness.js';
import { type ProviderConversation, conversationsClosedAfterEach } from './provider-conversation.js';

/** The unified rate-limit headers a subscription account's answers carry (the only family the CLI reads). */
function rateLimitHeaders(): Record<string, string> {
  const inAnHour = String(Math.floor(Date.now() / 1000) + 3600);
  return {
    'anthropic-ratelimit-unified-status': 'allowed_warning',
    'anthropic-ratelimit-unified-reset': inAnHour,
    'anthropic-ratelimit-unified-5h-status': 'allowed_warning',
    'anthropic-ratelimit-unified-5h-reset': inAnHour,
    'anthropic-ratelimit-unified-5h-utilization': '0.85',
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
  };
}

/** The context measurement that follows a run's end (the first after its run.completed). */
function measuredAfter(conversation: ProviderConversation, completion: AgentProviderV1Part) {
  return conversation.next(
    'session.context_measured',
    (part) => conversation.parts.indexOf(part) > conversation.parts.indexOf(completion),
  );
}

/** What a tool-using reply costs at the CLI's price list: about $0.42 for these counts. */
const expensive = { inputTokens: 100_000, outputTokens: 1_000 };

describeTransports('plan limits, context usage and budgets', ({ start }) => {
  const opening = conversationsClosedAfterEach();

  it('plan limits: an API-key account has none (said so), even when the API sends the unified rate-limit headers', async () => {
    const environment = await start();
    const conversation = await opening(environment);
    environment.api.enqueue(textReply('Hello.', { headers: rateLimitHeaders() }));
    await conversation.turn('Hi.');
    const limits = await conversation.next('session.limits_changed');
    expect(limits.limits).toMatchObject({ available: false, unavailableReason: 'api_key_account', windows: [] });
    // A second turn, and its context measurement: the CLI (2.1.332) reads the headers only for
    // subscription logins, so nothing changes the report.
    environment.api.enqueue(textReply('Again.', { headers: rateLimitHeaders() }));
    const { completion } = await conversation.turn('Again?');
    await measuredAfter(conversation, completion);
    expect(conversation.parts.filter((part) => part.type === 'session.limits_changed')).toHaveLength(1);
  });

  it('context usage is measured after each run, after its run.completed, with no call to the model API', async () => {
    const environment = await start();
    const conversation = await opening(environment);
    environment.api.enqueue(textReply('Hello.'));
    const { completion } = await conversation.turn('Hi.');
    const measured = await measuredAfter(conversation, completion);
    expect(measured.contextUsage.totalTokens).toBeGreaterThan(0);
    expect(measured.contextUsage.maxTokens).toBeGreaterThan(measured.contextUsage.totalTokens);
    expect(measured.contextUsage.categories.length).toBeGreaterThan(0);
    expect(environment.api.requests.filter((request) => request.kind === 'count_tokens')).toEqual([]);
  });

  it('maxTurns: a run that needs more model round trips ends failed, budget_exceeded (max_turns)', async () => {
    const environment = await start({ sandbox: true });
    const conversation = await opening(environment, {
      configuration: { permissionMode: 'bypass', maxTurns: 1 },
    });
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo hi', description: 'Say hi' }), textReply('Done.'));
    const { completion } = await conversation.turn('Run it.');
    expect(completion).toMatchObject({
      outcome: 'failed',
      error: { code: 'budget_exceeded', details: { reason: 'max_turns' } },
    });
    expect(turnRequests(environment)).toHaveLength(1);
    // The limit is per run: the next turn runs.
    environment.api.enqueue(textReply('Next.'));
    expect((await conversation.turn('Next?')).completion.outcome).toBe('succeeded');
  });

  it('maxCostUsd: a run whose cost passes what is left of the budget ends failed, budget_exceeded (max_cost)', async () => {
    const environment = await start({ sandbox: true });
    // $0.42 fits in $1, but not in what is left of it after $0.90 spent.
    const conversation = await opening(environment, {
      configuration: { permissionMode: 'bypass', maxCostUsd: 1 },
      spentCostUsd: 0.9,
    });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo hi', description: 'Say hi' }, { usage: expensive }),
      textReply('Done.'),
    );
    const { completion } = await conversation.turn('Run it.');
    expect(completion).toMatchObject({
      outcome: 'failed',
      error: { code: 'budget_exceeded', details: { reason: 'max_cost' } },
    });
    // The CLI stops before a second request. Whether the tool itself ran first is its timing: it can
    // start a call as the call's block ends, before the message's cost is known (seen once in CI, on a
    // loaded 2-core machine); what the budget guarantees is that the model is not asked again.
    expect(turnRequests(environment)).toHaveLength(1);
  });

  it('maxCostUsd: a run within the budget succeeds', async () => {
    const environment = await start({ sandbox: true });
    const conversation = await opening(environment, {
      configuration: { permissionMode: 'bypass', maxCostUsd: 1 },
    });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo hi', description: 'Say hi' }, { usage: expensive }),
      textReply('Done.'),
    );
    expect((await conversation.turn('Run it.')).completion.outcome).toBe('succeeded');
  });
});
