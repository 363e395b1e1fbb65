import type { FakeReply, FakeRequestView, FakeResponder } from '@tether/fake-anthropic-api';

/**
 * A fake API responder that knows where the agent runs: the claude CLI names its working directory
 * in every request ("Primary working directory: …", in the system prompt or, in a git repository, a
 * reminder of the conversation), and `reply` gets it with the request. For
 * tests whose agent works in a folder Tether makes (a worktree) and must write inside it before the
 * test can know its path. Requests without the line fall through (undefined).
 */
export function workingDirectoryResponder(
  reply: (directory: string, request: FakeRequestView) => FakeReply | undefined,
): FakeResponder {
  return (request) => {
    const body = JSON.stringify(request.body ?? '');
    const directory = /Primary working directory: ([^\\]+)\\n/.exec(body)?.[1];
    return directory === undefined ? undefined : reply(directory, request);
  };
}
