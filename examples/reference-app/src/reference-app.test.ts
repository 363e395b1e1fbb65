import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { runReferenceApp } from './reference-app.js';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

describe('the reference app', () => {
  it('runs end to end against the fake model with the real claude binary', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(
      toolUseReply('Read', { file_path: path.join(environment.workspace, 'README.md') }, { text: 'Reading.' }),
      textReply('This workspace has a README.', { usage: { inputTokens: 40, outputTokens: 8 } }),
    );
    await writeFile(path.join(environment.workspace, 'README.md'), '# Example\n');
    const lines: string[] = [];
    const result = await runReferenceApp({
      workspace: environment.workspace,
      prompt: 'What is here?',
      dataDir: path.join(environment.home, 'tether-data'),
      provider: { claudePath: environment.claudePath, environment: environment.environment },
      print: (line) => lines.push(line),
    });
    expect(result.run).toMatchObject({ outcome: 'succeeded', usage: { outputTokens: expect.any(Number) } });
    expect(result.answer).toBe('Reading.This workspace has a README.');
    expect(result.eventTypes[0]).toBe('session.opened');
    expect(result.eventTypes).toContain('session.closed');
    expect(lines).toContain('  tool Read succeeded');
    expect(lines.some((line) => line.startsWith('turn accepted as run run_'))).toBe(true);
    expect(lines).toContain('run succeeded');
  });
});
