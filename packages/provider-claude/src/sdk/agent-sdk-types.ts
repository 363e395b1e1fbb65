import type { UUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';

/*
 * The part of @anthropic-ai/claude-agent-sdk that the sdk transport uses, written structurally so
 * that the package builds (and the cli transport runs) without the SDK installed, while the SDK's
 * own `query` export is assignable to AgentSdkQueryFunction without a cast (a test checks that
 * against the installed version). Written against CLAUDE_AGENT_SDK_VERSION; names follow sdk.d.ts.
 */

/** A content block of a user line: text, or an image with its bytes (base64). */
type AgentSdkUserContentBlock =
  | { type: 'text'; text: string }
  | {
      type: 'image';
      source: { type: 'base64'; media_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'; data: string };
    };

/** The user line Tether streams in (SDKUserMessage, as far as Tether fills it). */
export interface AgentSdkUserMessage {
  type: 'user';
  message: { role: 'user'; content: string | AgentSdkUserContentBlock[] };
  parent_tool_use_id: null;
  /** The correlation stamp: a fresh uuid per turn, echoed on the turn's frames. */
  uuid: UUID;
  /** How a line sent while a turn runs is taken: next (folded next to a tool's result, else the next turn). */
  priority?: 'now' | 'next' | 'later';
}

export type AgentSdkPermissionMode = 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan' | 'dontAsk' | 'auto';

type AgentSdkRuleDestination = 'userSettings' | 'projectSettings' | 'localSettings' | 'session' | 'cliArg';
type AgentSdkRule = { toolName: string; ruleContent?: string };

/** PermissionUpdate: what an approval may change for later calls. */
export type AgentSdkPermissionUpdate =
  | {
      type: 'addRules' | 'replaceRules' | 'removeRules';
      rules: AgentSdkRule[];
      behavior: 'allow' | 'deny' | 'ask';
      destination: AgentSdkRuleDestination;
    }
  | { type: 'setMode'; mode: AgentSdkPermissionMode; destination: AgentSdkRuleDestination }
  | { type: 'addDirectories' | 'removeDirectories'; directories: string[]; destination: AgentSdkRuleDestination };

/** PermissionResult: the answer to one canUseTool call (the same payload the CLI's control_response carries). */
export type AgentSdkPermissionResult =
  | {
      behavior: 'allow';
      updatedInput?: Record<string, unknown>;
      updatedPermissions?: AgentSdkPermissionUpdate[];
      toolUseID?: string;
    }
  | { behavior: 'deny'; message: string; interrupt?: boolean; toolUseID?: string };

/** What canUseTool is told besides the tool's name and input: the can_use_tool request's fields, renamed. */
export interface AgentSdkPromptOptions {
  /** Aborted when the CLI withdraws the prompt (control_cancel_request) or the query closes. */
  signal: AbortSignal;
  suggestions?: readonly unknown[];
  blockedPath?: string;
  decisionReason?: string;
  title?: string;
  displayName?: string;
  description?: string;
  defaultToNo?: boolean;
  suppressAlwaysAllowRule?: boolean;
  toolUseID: string;
  /** The control_request's request_id (absent on SDKs that predate it). */
  requestId?: string;
}

export type AgentSdkCanUseTool = (
  toolName: string,
  input: Record<string, unknown>,
  options: AgentSdkPromptOptions,
) => Promise<AgentSdkPermissionResult>;

/** SpawnOptions: what the SDK would run, handed to spawnClaudeCodeProcess. */
export interface AgentSdkSpawnOptions {
  command: string;
  args: string[];
  cwd?: string;
  env: { [name: string]: string | undefined };
  /** Aborted only after the SDK's own graceful close (stdin EOF, then ~2 s). */
  signal: AbortSignal;
}

/** SpawnedProcess: the child the SDK talks to (stdin/stdout) and watches (exit). */
export interface AgentSdkSpawnedProcess {
  stdin: Writable;
  stdout: Readable;
  readonly killed: boolean;
  readonly exitCode: number | null;
  readonly signalCode?: NodeJS.Signals | null;
  kill(signal: NodeJS.Signals): boolean;
  on(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  once(event: 'error', listener: (error: Error) => void): void;
  off(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  off(event: 'error', listener: (error: Error) => void): void;
}

/** The query() options Tether sets: the same launch the cli transport makes, expressed as SDK options. */
export interface AgentSdkLaunchOptions {
  cwd: string;
  /** Replaces the child's environment entirely (the SDK adds its own CLAUDE_CODE_ENTRYPOINT and the like). */
  env: Record<string, string>;
  pathToClaudeCodeExecutable: string;
  includePartialMessages: true;
  /** The CLI's own system prompt, as the cli transport gets it (the SDK's default is an empty one). */
  systemPrompt: { type: 'preset'; preset: 'claude_code'; append?: string };
  sessionId?: string;
  resume?: string;
  /** With resume: continue under a new id (sessionId) and leave the resumed conversation as it was. */
  forkSession?: boolean;
  /** With resume: keep the conversation only up to and including this transcript entry. */
  resumeSessionAt?: string;
  /** Keep file checkpoints so rewindFiles() can put files back. */
  enableFileCheckpointing?: boolean;
  persistSession?: boolean;
  /** The most model round trips one turn may take (--max-turns). */
  maxTurns?: number;
  /** What this process may spend, in USD (--max-budget-usd). */
  maxBudgetUsd?: number;
  model?: string;
  permissionMode?: AgentSdkPermissionMode;
  effort?: 'low' | 'medium' | 'high' | 'xhigh' | 'max';
  agent?: string;
  settings?: string;
  additionalDirectories?: string[];
  allowedTools?: string[];
  disallowedTools?: string[];
  /** Flags without an option of their own (--mcp-config). */
  extraArgs?: Record<string, string | null>;
}

export interface AgentSdkOptions extends AgentSdkLaunchOptions {
  canUseTool: AgentSdkCanUseTool;
  spawnClaudeCodeProcess?: (options: AgentSdkSpawnOptions) => AgentSdkSpawnedProcess;
}

/**
 * The Query handle: an async iterable of the CLI's stream-json messages plus control methods. The
 * optional ones may be missing from an SDK (or an injected query): the transport then reports that
 * control as unsupported.
 */
export interface AgentSdkQuery extends AsyncIterable<unknown> {
  /**
   * Resolves with the interrupt receipt ({ still_queued }, and { cancelled } with cancelQueued), or
   * undefined on older CLIs. sdk.d.ts 0.3.332 declares no argument, but its implementation passes
   * cancelQueued on as cancel_queued; an SDK that ignores it gives the older receipt.
   */
  interrupt(options?: { cancelQueued?: boolean }): Promise<unknown>;
  setPermissionMode(mode: AgentSdkPermissionMode): Promise<unknown>;
  /** Resolves with nothing: the resolved model is not reported. */
  setModel(model?: string): Promise<unknown>;
  getContextUsage?(options?: { detail?: 'summary' | 'full' }): Promise<unknown>;
  /** Drops a steered user line the CLI has not taken yet: whether it did (not in sdk.d.ts 0.3.332; its implementation has it). */
  cancelAsyncMessage?(messageUuid: string): Promise<unknown>;
  /** get_usage: the account's plan limits (rate_limits_available false for API-key accounts). */
  usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET?(options?: { skipBehaviors?: boolean }): Promise<unknown>;
  /** Puts files back as they were before the user message (dry run: only says what would change). */
  rewindFiles?(userMessageId: string, options?: { dryRun?: boolean }): Promise<unknown>;
  /** The CLI's initialize answer (models with their resolved names, among others). */
  initializationResult?(): Promise<unknown>;
  close(): void;
}

/** The shape of the SDK's `query` export, in streaming-input mode. */
export type AgentSdkQueryFunction = (params: {
  prompt: AsyncIterable<AgentSdkUserMessage>;
  options: AgentSdkOptions;
}) => AgentSdkQuery;

/** ClaimOptions, as far as a claim carries what Tether's does (the folder and the claimable mode). */
export interface AgentSdkClaimOptions {
  cwd: string;
  permissionMode?: AgentSdkPermissionMode;
}

/**
 * SpareProcess: a parked CLI (`--await-claim`) that prewarm() started. claim() writes the claim and
 * then streams the prompt, returning the session's Query; `claimed` rejects with a message that
 * starts with the CLI's reason token (`cwd_not_found: …`, `spare_exited: …`) when it was refused.
 */
export interface AgentSdkSpareProcess {
  claim(params: { prompt: AsyncIterable<AgentSdkUserMessage>; options: AgentSdkClaimOptions }): AgentSdkQuery;
  readonly claimed: Promise<unknown>;
  close(): void;
}

/** The shape of the SDK's `prewarm` export: resolves once the parked process answered initialize. */
export type AgentSdkPrewarmFunction = (params: {
  options: AgentSdkOptions;
  initializeTimeoutMs?: number;
}) => Promise<AgentSdkSpareProcess>;
