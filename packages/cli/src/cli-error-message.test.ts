import { AgentError, type ErrorCode, type ErrorDetails } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { cliErrorMessage, permissionDenied } from './cli-error-message.js';

const sessionId = `ses_${'a'.repeat(32)}`;
const apiWords =
  /open_session|close_session|interrupt_run|submit_turn|rewind_session|commandId|continueSession|\/v1\/|receipt|git_worktree/;

function error(code: ErrorCode, message: string, details?: ErrorDetails): AgentError {
  return new AgentError({ code, message, ...(details ? { details } : {}) });
}

// Refusals as the runtime words them for API hosts (runtime-errors.ts, session-machine.ts and the commands).
const refusals: [AgentError, string][] = [
  [
    error('session_not_found', 'No session has that id. Check the id, or open a new session with open_session.'),
    '--data-dir DIR for another data dir',
  ],
  [
    error(
      'session_closed',
      'The session is closed. Reopen it with open_session and continueSession set to its id, then submit again.',
    ),
    `tether run --resume ${sessionId}`,
  ],
  [
    error('session_open', 'The session is still open. Close it (close_session) before deleting it.'),
    `tether close ${sessionId}`,
  ],
  [
    error(
      'run_active',
      'The session already has an active run. Wait for its run.completed event (or interrupt it), then submit again; or submit with delivery after_turn (queued as the next run) or steer (into the running turn).',
    ),
    `tether interrupt ${sessionId}`,
  ],
  [
    error('run_not_found', 'The session has no run with that id. Use a runId from its run.started events.'),
    'tether run --json',
  ],
  [
    error(
      'run_not_found',
      `That run is session ${sessionId}'s, not this session's (a fork shows the earlier turns of the session it was forked from, but they stay that session's runs). Fork ${sessionId} at it instead (fork_session with atRunId).`,
      { reason: 'other_session', sessionId },
    ),
    `tether fork ${sessionId} --at RUN`,
  ],
  [
    error(
      'workspace_has_changes',
      'The worktree /w/x (branch tether/ab) holds uncommitted changes. Merge or copy what you want to keep, then delete again with discardWorkspaceChanges (tether delete --discard-changes; DELETE /v1/sessions/:id?discardWorkspaceChanges=true) to remove it and its branch.',
      { reason: 'uncommitted_changes' },
    ),
    `The worktree /w/x (branch tether/ab) holds uncommitted changes. Merge or copy what you want to keep, then \`tether delete ${sessionId} --discard-changes\``,
  ],
  [
    error(
      'workspace_has_changes',
      "The worktree /w/x (branch tether/ab) holds commits beyond the commit it started from that neither the branch checked out in the repository's own folder nor a tag holds. Merge them into that branch (or tag them) and delete again, or delete again with discardWorkspaceChanges (tether delete --discard-changes; DELETE /v1/sessions/:id?discardWorkspaceChanges=true) to remove it and its branch.",
      { reason: 'commits_beyond_base' },
    ),
    `nor a tag holds. Merge them into that branch (or tag them) and delete again, or \`tether delete ${sessionId} --discard-changes\` removes it and its branch.`,
  ],
  [
    error(
      'capacity_exceeded',
      '5,000 sessions are open, the most this runtime allows (5,000). Close sessions you no longer need (close_session), or raise the limit (maxOpenSessions; tether serve --max-open-sessions).',
      { reason: 'open_session_limit' },
    ),
    '5,000 sessions are open, the most this runtime allows (5,000). Close sessions you no longer need (`tether close SESSION`',
  ],
  [
    error(
      'input_not_queued',
      'Input inp_1 was steered, and the claude provider cannot take a steer back. Interrupt the run (interrupt_run) to stop it before the agent takes it in.',
      { reason: 'steered' },
    ),
    `Input inp_1 was steered, and the claude provider cannot take a steer back. Stop the run with \`tether interrupt ${sessionId}\``,
  ],
  [
    error(
      'invalid_command',
      'The command is not valid (model: too long). Fix those fields and send it again with a new commandId.',
      { issues: [{ path: 'workspace.branch', message: 'a branch name such as "tether/my-task"' }] },
    ),
    '--branch: a branch name such as "tether/my-task". Give it another value and run this again.',
  ],
  [
    error(
      'invalid_command',
      'The command is not valid (input.0.text: too long). Fix those fields and send it again with a new commandId.',
      { issues: [{ path: 'input.0.text', message: 'too long' }] },
    ),
    'Tether refused what this command sent (input.0.text: too long)',
  ],
  [
    error(
      'capability_unsupported',
      'A directory workspace has no diff: Tether did not make it, so it knows no base to compare with. Open the session in a git worktree (kind git_worktree) to review its work as a diff.',
      { reason: 'workspace_diff' },
    ),
    'A directory workspace has no diff: Tether did not make it, so it knows no base to compare with. Start a session in a worktree of its own (`tether run --worktree "prompt"`',
  ],
  [
    error(
      'session_owned_elsewhere',
      'Another Tether process sharing this store drives this session: the daemon at http://h:1. Send the request there (a command with the same commandId, which is applied once; a delete or a read as it is), or retry here.',
    ),
    'Run the command there',
  ],
];

describe('cliErrorMessage', () => {
  it.each(refusals)('words %s for the command line, keeping what the message knew', (refusal, expected) => {
    const message = cliErrorMessage(refusal, ['delete', sessionId]);
    expect(message).toContain(expected);
    expect(message).not.toMatch(apiWords);
  });

  it('leaves an input part refusal, and anything it does not know, as it came', () => {
    const part = error('invalid_command', 'Input part 2 of 2 is not a valid image part: it needs …', {
      reason: 'input_part_shape',
      index: 1,
      issues: [{ path: 'input.1.data', message: 'Required' }],
    });
    expect(cliErrorMessage(part, [])).toBe(part.message);
    const other = error('provider_unavailable', 'The claude CLI was not found.');
    expect(cliErrorMessage(other, [])).toBe(other.message);
  });

  it('names a refused image or file by the option it came from, not by its place in the turn', () => {
    const argv = ['--image', 'shot.png', '--file=notes.md', '--file', 'gone.txt', 'prompt'];
    const missing = error('invalid_command', 'Input part 4 of 4: /w/gone.txt does not exist. Reference a file…', {
      reason: 'file_not_found',
      index: 3,
    });
    expect(cliErrorMessage(missing, argv)).toBe('--file gone.txt: /w/gone.txt does not exist. Reference a file…');
    const image = error('invalid_command', 'Input part 1 of 4 is not a PNG, JPEG, GIF or WebP image…', {
      reason: 'not_an_image',
      index: 0,
    });
    expect(cliErrorMessage(image, argv)).toBe('--image shot.png is not a PNG, JPEG, GIF or WebP image…');
  });

  it('a steer the running run cannot take says why and points to --queue, not to the --steer it was', () => {
    const argv = [sessionId, '--steer', 'Also this.'];
    const control = error(
      'run_active',
      'The active run is the compact control, which takes no follow-up while it runs. Submit with delivery after_turn instead (it runs once the control has ended).',
      { reason: 'control_active' },
    );
    expect(cliErrorMessage(control, argv, 'send')).toBe(
      `The active run is the compact control, which takes no follow-up while it runs. \`tether send ${sessionId} --queue "prompt"\` runs it once the control has ended.`,
    );
    const stopping = error(
      'run_active',
      'The active run is being stopped (interrupt_run), and a steer would go with it. Submit with delivery after_turn (it runs once the run has ended, unless the stop cancels the queue), or as a new turn then.',
      { reason: 'run_stopping' },
    );
    const worded = cliErrorMessage(stopping, argv, 'send');
    expect(worded).toContain(`tether send ${sessionId} --queue`);
    expect(worded).not.toMatch(apiWords);
    for (const message of [cliErrorMessage(control, argv, 'send'), worded])
      expect(message).not.toContain('--steer hands it into the running turn');
  });

  it("says how to fork or rewind elsewhere in the command's own options", () => {
    const noPoint = error(
      'checkpoint_unavailable',
      'The agent kept no point to copy the conversation at after that run (it answered nothing, or ended before saying where it stood). Fork at another run, or without atRunId.',
      { reason: 'no_checkpoint' },
    );
    expect(cliErrorMessage(noPoint, [sessionId, '--at', 'run_1'])).toBe(
      'The agent kept no point to copy the conversation at after that run (it answered nothing, or ended before saying where it stood). Fork at another run (--at RUN), or leave out --at to fork the whole conversation.',
    );
    const noFiles = error(
      'checkpoint_unavailable',
      'The agent kept no file checkpoint for that run. Rewind without files, or to another run.',
      { reason: 'no_checkpoint' },
    );
    expect(cliErrorMessage(noFiles, [sessionId, '--to', 'run_1', '--files'])).toBe(
      'The agent kept no file checkpoint for that run. Rewind without --files, or to another run (--to RUN).',
    );
  });
});

describe('a file or folder this user may not use', () => {
  it('is named with what to do, not as a bare EACCES; other failures are left to the caller', () => {
    const denied = Object.assign(new Error("EACCES: permission denied, open '/srv/other/daemon.json'"), {
      code: 'EACCES',
      path: '/srv/other/daemon.json',
    });
    expect(permissionDenied(denied)).toBe(
      `permission denied on /srv/other/daemon.json: this user (uid ${process.getuid!()}) may not use it. Fix its permissions, or use a data dir of your own (--data-dir or TETHER_HOME).`,
    );
    expect(permissionDenied(Object.assign(new Error('EPERM'), { code: 'EPERM', path: '/srv/x' }))).toContain('/srv/x');
    expect(permissionDenied(Object.assign(new Error('ENOENT'), { code: 'ENOENT', path: '/srv/x' }))).toBeNull();
    expect(permissionDenied(new Error('boom'))).toBeNull();
  });
});

describe('a daemon that did not answer in time', () => {
  it("keeps what happened and drops the client's own option, which a tether user cannot set", () => {
    const timedOut = new AgentError({
      code: 'runtime_stopped',
      message:
        "The Tether daemon at http://127.0.0.1:7437 did not answer GET /v1/sessions within 30 s; it may be hung or overloaded. Check that `tether serve` answers (GET /health) and retry, or raise requestTimeoutMs (or this call's timeoutMs) if the daemon is only slow.",
      details: { reason: 'request_timeout' },
    });
    const worded = cliErrorMessage(timedOut, ['sessions']);
    expect(worded).toBe(
      'The Tether daemon at http://127.0.0.1:7437 did not answer GET /v1/sessions within 30 s; it may be hung or overloaded. Check that the daemon answers (`tether doctor` shows it; a daemon stopped with Ctrl-Z or SIGSTOP answers nothing), then run this again.',
    );
    expect(worded).not.toContain('requestTimeoutMs');
  });
});

describe("a run's end that names an API command", () => {
  it('a plan limit with follow-ups queued says how to withdraw them with tether', () => {
    const planLimit = {
      code: 'provider_api_error' as const,
      message:
        'The account\'s plan limit is reached (its five_hour window): the model API refuses turns until it resets at 14:05 UTC on 5 Dec 2026. Wait until then, then send a short turn such as "continue": the agent keeps this turn\'s input in its conversation. The follow-up queued in this session waits for the reset and then starts by itself; withdraw it (cancel_queued_input) if it should not run.',
      details: { reason: 'plan_limit' },
    };
    const worded = cliErrorMessage(planLimit, [sessionId]);
    expect(worded).toContain(
      `withdraw it (\`tether cancel-input ${sessionId} INPUT\`; \`tether show ${sessionId}\` lists them) if it should not run.`,
    );
    expect(worded).not.toContain('cancel_queued_input');
    expect(worded).not.toMatch(apiWords);
  });
});

describe('a refused input that stays in the conversation', () => {
  it('names tether rewind, not the API command', () => {
    const refused = {
      code: 'provider_api_error' as const,
      message:
        "The model API answered HTTP 400. The API refused the request as invalid: check the session's configuration (model, effort, token limits) and the turn's input (images, files). The turn's input stays in the agent's conversation, and every later turn would send it again: rewind the session to before this run (rewind_session), then send the turn corrected.",
      details: { httpStatus: 400 },
    };
    const worded = cliErrorMessage(refused, ['send', sessionId, 'x']);
    expect(worded).toContain(`rewind the session to before this run (\`tether rewind ${sessionId} --to RUN\``);
    expect(worded).not.toMatch(apiWords);
    // Shown at the run's end, the run is known: its id is in the command.
    const runId = `run_${'c'.repeat(32)}`;
    expect(cliErrorMessage(refused, [sessionId, runId])).toContain(
      `rewind the session to before this run (\`tether rewind ${sessionId} --to ${runId}\`), then`,
    );
  });

  it('a model the API does not know names --model with --resume, not set_model', () => {
    const unknown = {
      code: 'provider_api_error' as const,
      message:
        "The model API answered HTTP 404. The API knows no such model or endpoint: check the session's model name (set_model) and ANTHROPIC_BASE_URL.",
      details: { httpStatus: 404 },
    };
    const worded = cliErrorMessage(unknown, ['run', '--resume', sessionId, 'x']);
    expect(worded).toContain(`(\`tether run --resume ${sessionId} --model M "prompt"\` switches it)`);
    expect(worded).not.toContain('set_model');
  });
});

describe('a spent budget', () => {
  it('names tether fork as the way on, not the API command', () => {
    const spent = {
      code: 'budget_exceeded' as const,
      message:
        "The session has spent $0.0012 of its $0.001 budget (maxCostUsd), so it takes no more turns (a session's budget cannot be raised). To go on, fork it (fork_session: its conversation continues in a new session with a budget of its own), or open a new session.",
      details: { reason: 'max_cost' },
    };
    const worded = cliErrorMessage(spent, ['send', sessionId, 'x']);
    expect(worded).toContain(`fork it (\`tether fork ${sessionId}\`: its conversation continues`);
    expect(worded).not.toContain('fork_session');
  });
});

describe('a session with an active run', () => {
  it('names --queue and --steer only to commands that take them', () => {
    const active = { code: 'run_active' as const, message: 'The session already has an active run.' };
    expect(cliErrorMessage(active, [sessionId], 'send')).toContain('--queue runs it as the next run');
    expect(cliErrorMessage(active, [sessionId], 'fork')).not.toContain('--queue');
    expect(cliErrorMessage(active, [sessionId], 'rewind')).toContain(`tether interrupt ${sessionId}`);
  });
});
