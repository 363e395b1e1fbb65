import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { ControlChannel } from './control-channel.js';

/** A channel whose written requests the test answers with the frame the CLI would write. */
function answered(response: Record<string, unknown>): Promise<unknown> {
  const written: { request_id: string }[] = [];
  const channel = new ControlChannel({
    write: (message) => {
      written.push(message as { request_id: string });
      return true;
    },
  });
  const request = channel.request('claim_session', { cwd: '/gone' });
  channel.handleResponse({
    type: 'control_response',
    response: { request_id: written[0]!.request_id, ...response } as never,
  });
  return request.then(
    () => null,
    (error: unknown) => (AgentError.isInstance(error) ? error.details : error),
  );
}

describe('ControlChannel refusals', () => {
  it("names the CLI's reason token: its error_code, or the token its error text starts with, never the text", async () => {
    expect(await answered({ subtype: 'error', error: 'x: y', error_code: 'project_settings_not_claimable' })).toEqual({
      reason: 'project_settings_not_claimable',
    });
    expect(
      await answered({ subtype: 'error', error: 'cwd_not_found: the claim cwd does not exist or is not accessible' }),
    ).toEqual({ reason: 'cwd_not_found' });
    expect(await answered({ subtype: 'error', error: 'Something went wrong: details' })).toEqual({ reason: 'error' });
  });
});
