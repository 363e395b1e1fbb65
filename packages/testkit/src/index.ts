export { createMockProvider, replyWith, replyWithCheckpoint, mockCapabilities } from './mock-provider.js';
export type {
  MockProvider,
  MockProviderOptions,
  MockProviderSession,
  MockSteer,
  MockTurnContext,
  MockTurnScript,
} from './mock-provider.js';
export { claudeChildEnvironment, createClaudeTestEnvironment, testClaudePath } from './claude-test-environment.js';
export type { ClaudeTestEnvironment, ClaudeTestEnvironmentOptions } from './claude-test-environment.js';
export { collectUntil, runEvents, answerText, waitForEvent, inputLifecycle, succeededTurn } from './collect-events.js';

export const VERSION = '0.1.0';
export { fakeClaudeCliPath, fakeCliScript, fakeCliTurn, fakeCliControls, fakeCliResult } from './fake-claude-cli.js';
export type { FakeCliStep, FakeCliControlAnswer } from './fake-claude-cli.js';
// provider-claude's /proc scanner (the one supervision uses), here so tests reach it with the rest of their kit.
export { processesWithEnvironment } from '@tether/provider-claude/test-support';
export { endTestProcessesAndFolder, killProcessesWithEnvironment } from './kill-processes.js';
export { agentErrorOf } from './rejection.js';
export { countingClaude } from './counting-claude.js';
export type { CountingClaudeBehaviour } from './counting-claude.js';
export { createFakeWorkspaceAcquirer } from './fake-workspace-acquirer.js';
export type { FakeWorkspaceAcquirer, FakeWorkspaceCall, FakeWorkspaceStep } from './fake-workspace-acquirer.js';
export { sampleApprovalRequest, sampleQuestions, sampleSessionRecord, sampleWorktreeStatus } from './sample-records.js';
export { scriptedAgentSdkQuery, scriptedTurnFrames } from './scripted-agent-sdk-query.js';
export type { ScriptedQuery, ScriptedQueryContext, ScriptedQueryControls } from './scripted-agent-sdk-query.js';
export { gifBytes, jpegBytes, pngBytes, webpBytes } from './sample-images.js';
export { createGitRepository } from './git-repository.js';
export type { GitRunner } from './git-repository.js';
export { workingDirectoryResponder } from './working-directory-responder.js';
export { startTestPostgres } from './test-postgres.js';
export type { TestPostgres, TestPostgresOptions } from './test-postgres.js';
export { recordingLogger } from './recording-logger.js';
export type { RecordedLogLine } from './recording-logger.js';
export { useTestPostgres } from './use-test-postgres.js';
