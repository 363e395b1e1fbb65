import { AgentError } from '@tether/protocol';
import type {
  ClaudeConnection,
  ClaudeControlRequest,
  ClaudeUserMessage,
  ConnectionEnding,
  ConnectionListener,
  ConnectionProcess,
  LaunchPlan,
} from '../connection/claude-connection.js';
import { parseCliFrame } from '../frames/cli-frame-schemas.js';
import { ClaudeProcess, type ProcessExit } from '../process/claude-process.js';
import type {
  AgentSdkQuery,
  AgentSdkQueryFunction,
  AgentSdkSpawnOptions,
  AgentSdkSpawnedProcess,
  AgentSdkUserMessage,
} from './agent-sdk-types.js';
import { AnswerDelivery } from './answer-delivery.js';
import { buildSdkOptions } from './build-sdk-options.js';
import { MessageQueue } from './message-queue.js';
import { markPromptPositions, positionMarkerOf } from './prompt-positions.js';
import { SdkPromptBridge } from './sdk-prompt-bridge.js';
import { sdkControlRequest } from './sdk-control-requests.js';

export interface SdkConnectionOptions {
  readonly query: AgentSdkQueryFunction;
  readonly binaryPath: string;
  readonly plan: LaunchPlan;
  readonly listener: ConnectionListener;
}

/** How long the SDK's stream may end ahead of our own exit report (the stderr tail comes with it). */
const exitReportGraceMs = 5_000;
const closedMessage = 'The agent stopped, so this request was not permitted.';

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function definedEnvironment(environment: AgentSdkSpawnOptions['env']): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/**
 * The sdk transport: one streaming-input query() per agent process, so successive turns continue
 * one conversation and interrupt() ends a run, not the session. The SDK spawns the CLI through
 * spawnClaudeCodeProcess into a ClaudeProcess of ours, so supervision (process group, marker,
 * sweep, stderr tail for the classifier) is the cli transport's. The SDK's messages are the CLI's
 * stream-json frames: they go to the listener as they are; canUseTool becomes the same prompt path.
 */
export class SdkConnection implements ClaudeConnection {
  readonly transport = 'sdk' as const;
  private readonly listener: ConnectionListener;
  private readonly input = new MessageQueue<AgentSdkUserMessage>();
  private readonly prompts: SdkPromptBridge;
  private readonly answers = new AnswerDelivery();
  private readonly query: AgentSdkQuery | null;
  private child: ClaudeProcess | undefined;
  private exit: ProcessExit | undefined;
  private ended = false;
  private markFinished!: () => void;
  /** Settles once the listener has been told the connection ended. */
  private readonly finished = new Promise<void>((resolve) => {
    this.markFinished = resolve;
  });

  constructor(options: SdkConnectionOptions) {
    this.listener = options.listener;
    this.prompts = new SdkPromptBridge(() => this.listener);
    let query: AgentSdkQuery | null = null;
    try {
      query = options.query({
        prompt: this.input,
        options: {
          ...buildSdkOptions(options.plan, options.binaryPath),
          canUseTool: (toolName, input, promptOptions) => this.prompts.ask(toolName, input, promptOptions),
          spawnClaudeCodeProcess: (spawnOptions) => this.spawn(spawnOptions, options.plan.cwd),
        },
      });
    } catch {
      // A query() that refuses its options never runs: the run fails like a stream that threw, or
      // as a failed start when it was our spawn (called from inside query()) that threw.
      queueMicrotask(() => this.finish(this.exit ?? { kind: 'stream_failed' }));
    }
    this.query = query;
    if (query) void this.pump(query);
  }

  get process(): ConnectionProcess | undefined {
    const pid = this.child?.pid;
    return pid === undefined ? undefined : { pid, startTime: this.child!.startTime, marker: this.child!.marker };
  }

  get running(): boolean {
    return !this.ended;
  }

  send(message: ClaudeUserMessage): boolean {
    // The blocks go through as they are: the SDK writes the line to the CLI unchanged.
    const content =
      typeof message.message.content === 'string' ? message.message.content : [...message.message.content];
    return this.input.push({
      type: 'user',
      message: { role: 'user', content },
      parent_tool_use_id: null,
      uuid: message.uuid as AgentSdkUserMessage['uuid'],
      ...(message.priority ? { priority: message.priority } : {}),
    });
  }

  request(request: ClaudeControlRequest, options: { timeoutMs?: number } = {}): Promise<unknown> {
    if (this.ended || !this.query) {
      return Promise.reject(
        new AgentError({
          code: 'provider_crashed',
          message: 'The claude CLI is not accepting input any more.',
          details: { reason: 'stdin_closed' },
        }),
      );
    }
    return sdkControlRequest(this.query, request, { timeoutMs: options.timeoutMs ?? 30_000, ended: () => this.ended });
  }

  answerPrompt(requestId: string, response: Record<string, unknown>): boolean | Promise<boolean> {
    if (!this.prompts.answer(requestId, response)) return false;
    // The SDK writes the answer itself: under a process of ours its write is watched; an injected query's is not.
    return this.child ? this.answers.delivered(requestId) : true;
  }

  async stop(options: { busy: boolean; force?: boolean }): Promise<void> {
    this.input.end();
    // Our own escalation (EOF, SIGTERM, SIGKILL to the group, then the sweep), as for the cli transport.
    if (this.child) await this.child.stop(options);
    else this.query?.close();
    // Nothing may reach the session after its stop: wait for the SDK's stream to end (bounded).
    await Promise.race([this.finished, delay(exitReportGraceMs)]);
    this.finish(this.exit ?? { kind: 'stream_ended' });
    this.query?.close();
  }

  /** spawnClaudeCodeProcess: the command the SDK built, run as a supervised child of ours. */
  private spawn(spawnOptions: AgentSdkSpawnOptions, cwd: string): AgentSdkSpawnedProcess {
    let child: ClaudeProcess;
    try {
      child = new ClaudeProcess({
        binaryPath: spawnOptions.command,
        argv: spawnOptions.args,
        environment: definedEnvironment(spawnOptions.env),
        cwd: spawnOptions.cwd ?? cwd,
        onExit: (exit) => {
          this.exit = exit;
        },
      });
    } catch (error) {
      // spawn() throws synchronously for some failures (E2BIG); the SDK's stream then fails, and this says why.
      this.exit = { kind: 'spawn_failed', errorCode: (error as NodeJS.ErrnoException).code };
      throw error;
    }
    this.child = child;
    // The SDK's own close ends in this signal; the stop is ours either way.
    spawnOptions.signal.addEventListener('abort', () => void child.stop({ busy: true }), { once: true });
    this.prompts.usePositionMarkers();
    return child.handedOver(markPromptPositions, (stdin) =>
      this.answers.wrap(stdin, () => this.listener.onInputFailed()),
    );
  }

  private async pump(query: AgentSdkQuery): Promise<void> {
    let threw = false;
    try {
      for await (const message of query) {
        if (this.ended) break;
        this.onMessage(message);
      }
    } catch {
      // The SDK's error text is never passed on: the classifier reads the process's exit instead.
      threw = true;
    }
    this.finish(await this.ending(threw));
  }

  private onMessage(message: unknown): void {
    const marker = positionMarkerOf(message);
    if (marker) return this.prompts.onMarker(marker);
    const frame = parseCliFrame(message);
    // The SDK answers control traffic itself; an injected query that yields it gets it ignored.
    if (
      frame.kind === 'control_request' ||
      frame.kind === 'control_response' ||
      frame.kind === 'control_cancel_request'
    )
      return;
    this.listener.onFrame(frame);
    this.prompts.afterFrame(frame);
  }

  /**
   * The SDK's stream is over: our process's exit explains why (a crash reads as on the cli
   * transport), unless the stream threw over a clean exit: then the SDK failed on its own (it
   * closes the process after its own errors) and the exit explains nothing.
   */
  private async ending(threw: boolean): Promise<ConnectionEnding> {
    const child = this.child;
    if (child) {
      await Promise.race([child.exited, delay(exitReportGraceMs)]);
      // A stream that ended while its process lives on: the process goes too.
      if (child.running) await child.stop({ busy: true });
    }
    const exit = this.exit;
    const cleanExit = exit?.kind === 'exited' && exit.exitCode === 0 && exit.signal === null;
    if (exit && !(threw && cleanExit)) return exit;
    if (threw) return exit ? { kind: 'stream_failed', processExit: exit } : { kind: 'stream_failed' };
    return { kind: 'stream_ended' };
  }

  private finish(ending: ConnectionEnding): void {
    if (this.ended) return;
    this.ended = true;
    this.input.end();
    this.prompts.close(closedMessage);
    this.listener.onEnd(ending);
    this.markFinished();
  }
}
