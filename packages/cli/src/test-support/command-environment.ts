import path from 'node:path';

/**
 * Everything a `tether` command under test (and the claude child it starts) sees, built explicitly:
 * a HOME and data dir under the test's root, the binary given (the tests pass the pinned one), the
 * fake API with a fake key, and nothing inherited from the shell running the tests. Tests add what
 * they need on top.
 */
export function commandEnvironment(
  paths: { root: string; apiUrl: string; claudePath: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  const { root, apiUrl, claudePath } = paths;
  return {
    PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter),
    HOME: path.join(root, 'home'),
    LANG: 'C.UTF-8',
    TETHER_HOME: path.join(root, 'data'),
    TETHER_CLAUDE_PATH: claudePath,
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: 'sk-tether-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
    ...extra,
  };
}
