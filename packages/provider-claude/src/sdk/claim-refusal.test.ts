import { describe, expect, it } from 'vitest';
import { claimRefusal } from './claim-refusal.js';

describe("the SDK's refusal of a claim", () => {
  it("carries the CLI's reason token, never its text", () => {
    const refusal = claimRefusal(new Error('cwd_not_found: the claim cwd does not exist or is not accessible'), false);
    expect(refusal.details).toEqual({ reason: 'cwd_not_found' });
    expect(refusal.message).not.toContain('cwd does not exist');
    expect(
      claimRefusal(new Error('spare_exited: the spare process exited before it was claimed'), false).details,
    ).toEqual({ reason: 'spare_exited' });
  });

  it('claim() throwing without a token means the spare is gone; anything else unknown', () => {
    const gone = new Error('SpareProcess.claim(): the spare was closed or has exited; start the session with query()');
    expect(claimRefusal(gone, true).details).toEqual({ reason: 'spare_exited' });
    expect(claimRefusal(new Error('Something else'), false).details).toEqual({ reason: 'unknown' });
  });
});
