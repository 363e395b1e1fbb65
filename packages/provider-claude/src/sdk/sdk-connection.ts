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
import type { CliPermissionMode } from '../launch/permission-modes.js';
import type { AgentPriority } from '../process/agent-priority.js';
import { ClaudeProcess, type ProcessExit } from '../process/claude-process.js';
import type {
  AgentSdkOptions,
  AgentSdkPrewarmFunction,
  AgentSdkQuery,
  AgentSdkQueryFunction,
  AgentSdkSpareProcess,
  AgentSdkSpawnOptions,
  AgentSdkSpawnedProcess,
  AgentSdkUserMessage,
} from './agent-sdk-types.js';
import { AnswerDelivery } from './answer-delivery.js';
import { buildSdkOptions } from './build-sdk-options.js';
import { claimRefusal } from './claim-refusal.js';
import { MessageQueue } from './message-queue.js';
import { markPromptPositions, positionMarkerOf } from './prompt-positions.js';
import { SdkPromptBridge } from './sdk-prompt-bridge.js';
import { boundedRequest, sdkControlRequest } from './sdk-control-requests.js';

export interface SdkConnectionOptions {
  readonly query: AgentSdkQueryFunction;
  /** The SDK's prewarm(): a plan with awaitClaim starts a parked spare through it. */
  readonly prewarm?: AgentSdkPrewarmFunction | undefined;
  readonly binaryPath: string;
  readonly plan: LaunchPlan;
  readonly listener: ConnectionListener;
  /** How the child's priority follows the host's other agents (process/agent-priority.ts). */
  readonly priority?: AgentPriority;
}

/** How long the SDK's stream may end ahead of our own exit report (the stderr tail comes with it). */
const exitReportGraceMs = 5_000;
const closedMessage = 'The agent stopped, so this request was not permitted.';
/**
 * How long a refused request waits for its process's exit before it is taken for the CLI's own
 * refusal: the SDK rejects what is pending as soon as the process's output closes, before the exit
 * that tells a crash from a refusal is reported.
 */
const refusalExitGraceMs = 250;
/** As long as the warm pool waits for a spare's initialize answer. */
const prewarmTimeoutMs = 30_000;

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
 * A plan with awaitClaim starts a parked spare with the SDK's prewarm() instead: its Query exists
 * once a claim_session request claims it (SpareProcess.claim, with the same streaming input).
 */
export class SdkConnection implements ClaudeConnection {
  readonly transport = 'sdk' as const;
  private readonly listener: ConnectionListener;
  private readonly input = new MessageQueue<AgentSdkUserMessage>();
  private readonly prompts: SdkPromptBridge;
  private readonly answers = new AnswerDelivery();
  private query: AgentSdkQuery | null = null;
  /** A parked spare (awaitClaim): settles once it answered initialize; its claim makes `query`. */
  private readonly parked: Promise<AgentSdkSpareProcess> | null = null;
  private spare: AgentSdkSpareProcess | undefined;
  private stopping = false;
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
    const sdkOptions: AgentSdkOptions = {
      ...buildSdkOptions(options.plan, options.binaryPath),
      canUseTool: (toolName, input, promptOptions) => this.prompts.ask(toolName, input, promptOptions),
      spawnClaudeCodeProcess: (spawnOptions) => this.spawn(spawnOptions, options.plan.cwd, options.priority),
    };
    if (options.plan.awaitClaim) {
      this.parked = this.park(options.prewarm, sdkOptions);
      // Its failure is the connection's end (park reports it); whoever asks for readiness hears it too.
      this.parked.catch(() => undefined);
      return;
    }
    let query: AgentSdkQuery | null = null;
    try {
      query = options.query({ prompt: this.input, options: sdkOptions });
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
    if (!this.ended && this.parked && !this.query) {
      // Parked: ready once prewarm() resolved (its initialize answered); the claim makes the Query.
      if (request.subtype === 'initialize') return this.parked.then(() => ({}));
      if (request.subtype === 'claim_session')
        return boundedRequest(request.subtype, () => this.claim(request.cwd, request.permission_mode), {
          timeoutMs: options.timeoutMs ?? 30_000,
          ended: () => this.endedByNow(),
        });
    }
    if (this.ended || !this.query) {
      return Promise.reject(
        new AgentError({
          code: 'provider_crashed',
          message: 'The claude CLI is not accepting input any more.',
          details: { reason: 'stdin_closed' },
        }),
      );
    }
    return sdkControlRequest(this.query, request, {
      timeoutMs: options.timeoutMs ?? 30_000,
      ended: () => this.endedByNow(),
    });
  }

  /** Whether the connection has ended, or its process exits within a moment (a request it had pending was rejected). */
  private async endedByNow(): Promise<boolean> {
    const child = this.child;
    if (this.ended || (child !== undefined && !child.running)) return true;
    if (child === undefined) return false;
    return Promise.race([child.exited.then(() => true), delay(refusalExitGraceMs).then(() => false)]);
  }

  answerPrompt(requestId: string, response: Record<string, unknown>): boolean | Promise<boolean> {
    if (!this.prompts.answer(requestId, response)) return false;
    // The SDK writes the answer itself: under a process of ours its write is watched; an injected query's is not.
    return this.child ? this.answers.delivered(requestId) : true;
  }

  async stop(options: { busy: boolean; force?: boolean }): Promise<void> {
    this.stopping = true;
    this.input.end();
    // Our own escalation (EOF, SIGTERM, SIGKILL to the group, then the sweep), as for the cli transport.
    if (this.child) await this.child.stop(options);
    else this.query?.close();
    // A spare still starting: prewarm() fails once its process is gone, or spawns it and spawn() stops it.
    if (this.parked && !this.spare) await this.parked.catch(() => undefined);
    // Nothing may reach the session after its stop: wait for the SDK's stream to end (bounded).
    await Promise.race([this.finished, delay(exitReportGraceMs)]);
    this.finish(this.exit ?? { kind: 'stream_ended' });
    this.query?.close();
    // Before a claim this discards the spare; after one it is the Query's close again.
    this.spare?.close();
  }

  async swept(): Promise<void> {
    await this.child?.swept;
  }

  /** Starts the parked spare; its end before a claim is the connection's end (the pool lets it go). */
  private async park(
    prewarm: AgentSdkPrewarmFunction | undefined,
    options: AgentSdkOptions,
  ): Promise<AgentSdkSpareProcess> {
    try {
      if (!prewarm) throw new Error('The Agent SDK has no prewarm()');
      const spare = await prewarm({ options, initializeTimeoutMs: prewarmTimeoutMs });
      this.spare = spare;
      void this.child?.exited.then(async () => {
        if (!this.query) this.finish(await this.ending(false));
      });
      // Stopped while it started: its process is gone or going (spawn() stopped it), the spare is discarded.
      if (this.stopping) spare.close();
      return spare;
    } catch (error) {
      this.finish(await this.ending(true));
      throw error;
    }
  }

  /**
   * SpareProcess.claim with the connection's streaming input: the SDK writes the claim, then the
   * turn the session pushes right after, so the two travel together as on the cli transport. A
   * refusal rejects with the CLI's reason; the Query then answers the turn with a not_claimed error
   * result and ends, and so does this connection.
   */
  private claim(cwd: string, permissionMode: CliPermissionMode | undefined): Promise<unknown> {
    const spare = this.spare;
    if (!spare) return Promise.reject(claimRefusal(undefined, true));
    let query: AgentSdkQuery;
    try {
      query = spare.claim({
        prompt: this.input,
        options: { cwd, ...(permissionMode === undefined ? {} : { permissionMode }) },
      });
    } catch (error) {
      return Promise.reject(claimRefusal(error, true));
    }
    this.query = query;
    void this.pump(query);
    return spare.claimed.catch((error: unknown) => {
      throw claimRefusal(error, false);
    });
  }

  /** spawnClaudeCodeProcess: the command the SDK built, run as a supervised child of ours. */
  private spawn(
    spawnOptions: AgentSdkSpawnOptions,
    cwd: string,
    priority: AgentPriority | undefined,
  ): AgentSdkSpawnedProcess {
    let child: ClaudeProcess;
    try {
      child = new ClaudeProcess({
        binaryPath: spawnOptions.command,
        argv: spawnOptions.args,
        environment: definedEnvironment(spawnOptions.env),
        cwd: spawnOptions.cwd ?? cwd,
        ...(priority ? { priority } : {}),
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
    if (this.stopping) void child.stop({ busy: false, force: true });
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
