import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { versionCheckPassed } from './binary/checked-binaries.js';
import { bundledBinaryPath } from './binary/resolve-binary.js';
import { claudeCapabilities, claudeSdkCapabilities } from './claude-capabilities.js';
import { createClaudeProvider, createClaudeProviderWith } from './claude-provider.js';
import { CLAUDE_AGENT_SDK_VERSION } from './sdk/load-agent-sdk.js';

// Any executable that answers --version stands in for the binary here: no session starts one.
const claudePath = process.execPath;
let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-provider-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function sessionOptions() {
  return {
    sessionId: 'ses_test',
    workspace: { kind: 'directory' as const, path: workspace },
    configuration: {},
    ephemeral: false,
    resumeProviderSessionId: null,
    emit: () => {},
  };
}

const missing = () => Promise.reject(Object.assign(new Error('Cannot find package'), { code: 'ERR_MODULE_NOT_FOUND' }));

describe('createClaudeProvider transports', () => {
  it('defaults to the cli transport; the sdk transport declares what it lacks (no session cost report)', () => {
    expect(createClaudeProvider({ claudePath }).capabilities).toBe(claudeCapabilities);
    expect(createClaudeProvider({ claudePath, transport: 'sdk' }).capabilities).toBe(claudeSdkCapabilities);
    expect(claudeCapabilities.sessionCost).toBe(true);
    expect(claudeSdkCapabilities).toEqual({ ...claudeCapabilities, sessionCost: false });
  });

  it('without the SDK installed, opening an sdk session fails with a retryable provider_unavailable naming the package; installing it is enough', async () => {
    let installed = false;
    let loads = 0;
    const provider = createClaudeProviderWith(
      { claudePath, transport: 'sdk' },
      {
        loadAgentSdk: () => {
          loads += 1;
          return installed ? import('@anthropic-ai/claude-agent-sdk') : missing();
        },
      },
    );
    // Nothing is loaded until a session needs it.
    expect(loads).toBe(0);
    const error = await provider.doOpenSession(sessionOptions()).catch((reason: unknown) => reason);
    expect(error).toMatchObject({
      code: 'provider_unavailable',
      retryable: true,
      details: { reason: 'sdk_not_installed' },
    });
    expect((error as Error).message).toContain('@anthropic-ai/claude-agent-sdk');
    expect(await provider.doProbe()).toMatchObject({
      available: false,
      problem: { code: 'provider_unavailable', details: { reason: 'sdk_not_installed' } },
    });
    installed = true;
    const session = await provider.doOpenSession(sessionOptions());
    await session.doStop('close');
    expect(loads).toBe(3);
  });

  it('the probe says which transport it is, and for sdk which Agent SDK runs it', async () => {
    const cli = await createClaudeProvider({ claudePath }).doProbe();
    expect(cli).toMatchObject({ transport: 'cli' });
    expect(cli).not.toHaveProperty('library');
    expect(await createClaudeProvider({ claudePath, transport: 'sdk' }).doProbe()).toMatchObject({
      transport: 'sdk',
      library: { name: '@anthropic-ai/claude-agent-sdk', version: CLAUDE_AGENT_SDK_VERSION },
    });
  });

  it('the cli transport never loads the SDK', async () => {
    let loads = 0;
    const provider = createClaudeProviderWith(
      { claudePath },
      {
        loadAgentSdk: () => {
          loads += 1;
          return missing();
        },
      },
    );
    const session = await provider.doOpenSession(sessionOptions());
    await session.doStop('close');
    expect(loads).toBe(0);
  });

  it('prepares ahead of any session without starting an agent or loading the SDK, on either transport', async () => {
    for (const transport of ['cli', 'sdk'] as const) {
      let loads = 0;
      const provider = createClaudeProviderWith(
        // A binary that does not exist: an agent started here would fail the preparation.
        { claudePath: '/nonexistent/claude', transport },
        {
          loadAgentSdk: () => {
            loads += 1;
            return missing();
          },
        },
      );
      await expect(provider.doPrepare?.()).resolves.toBeUndefined();
      expect(loads).toBe(0);
      await provider.doDispose?.();
    }
  });

  it("checks the bundled binary's version as it prepares, from its package; a binary only a run can tell is not run", async () => {
    const bundled = bundledBinaryPath();
    if (!bundled) throw new Error('The bundled claude binary is missing: run "./dev npm ci".');
    // A link of its own: a path no other test checked in this process.
    const link = path.join(workspace, 'bundled-claude');
    await symlink(bundled, link);
    const ran = path.join(workspace, 'ran');
    const other = path.join(workspace, 'claude');
    await writeFile(other, `#!/bin/sh\ntouch '${ran}'\necho '2.1.332 (Claude Code)'\n`);
    await chmod(other, 0o755);
    for (const binary of [link, other]) {
      const provider = createClaudeProvider({ claudePath: binary });
      await provider.doPrepare?.();
      await provider.doDispose?.();
    }
    expect(versionCheckPassed(link)).toBe(true);
    expect(versionCheckPassed(other)).toBe(false);
    expect(existsSync(ran)).toBe(false);
  });

  it('an injected query is used as given: the SDK is never loaded', async () => {
    let loads = 0;
    const query = (() => {
      throw new Error('not called: no turn is sent');
    }) as never;
    const provider = createClaudeProviderWith(
      { claudePath, transport: 'sdk', query },
      {
        loadAgentSdk: () => {
          loads += 1;
          return missing();
        },
      },
    );
    const session = await provider.doOpenSession(sessionOptions());
    await session.doStop('close');
    expect(loads).toBe(0);
  });
});
