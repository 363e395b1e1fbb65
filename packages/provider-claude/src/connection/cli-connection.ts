import { AgentError } from '@tether/protocol';
import type { DecodedLine } from '../codec/line-decoder.js';
import { ControlChannel } from '../control/control-channel.js';
import { parseCliFrame } from '../frames/cli-frame-schemas.js';
import { TextDeltaJoiner } from '../frames/text-delta-joining.js';
import { buildClaudeArguments } from '../launch/build-arguments.js';
import { type PrivateTextFile, writePrivateTextFile } from '../launch/system-prompt-file.js';
import type { AgentPriority } from '../process/agent-priority.js';
import { ClaudeProcess, type ProcessExit } from '../process/claude-process.js';
import type { StdoutChannel } from '../process/stdout-channel.js';
import type {
  ClaudeConnection,
  ClaudeControlRequest,
  ClaudeUserMessage,
  ConnectionListener,
  ConnectionProcess,
  LaunchPlan,
} from './claude-connection.js';

/**
 * The cli transport: one `claude -p --input-format stream-json …` child of ours, its stdout
 * decoded line by line. Control traffic stays here (our requests and their answers, the CLI's
 * prompts and withdrawals); every other frame goes to the listener in stdout order.
 */
export class CliConnection implements ClaudeConnection {
  readonly transport = 'cli' as const;
  private readonly child: ClaudeProcess;
  private readonly control: ControlChannel;
  private readonly listener: ConnectionListener;
  /** A block's streamed deltas go on as one frame, at most every 5 ms (frames/text-delta-joining.ts). */
  private readonly deltas = new TextDeltaJoiner((frame) => this.onValue(frame));
  private inputFailed = false;
  /** The last stdout line was a streamed delta: the next read may wait to take more of them at once. */
  private streaming = false;
  /**
   * The session's system-prompt append, which claude reads from a private file at its start (2.1.332):
   * removed at its first line of output (a SIGKILLed host leaves it no longer than that), else at its exit.
   */
  private promptFile: PrivateTextFile | undefined;

  /** `stdoutChannel`: the child's stdout read paced (process/stdout-channel.ts); a pipe without it. */
  constructor(options: {
    binaryPath: string;
    plan: LaunchPlan;
    listener: ConnectionListener;
    stdoutChannel?: StdoutChannel;
    /** How the child's priority follows the host's other agents (process/agent-priority.ts). */
    priority?: AgentPriority;
  }) {
    const { plan } = options;
    this.listener = options.listener;
    const append = plan.configuration.appendSystemPrompt;
    this.promptFile = append === undefined ? undefined : writePrivateTextFile(append);
    try {
      this.child = this.startChild(options);
    } catch (error) {
      this.promptFile?.remove();
      throw error;
    }
    this.control = new ControlChannel({
      write: (message, onWritten) =>
        this.child.write(message, (error) => {
          this.afterWrite(error);
          onWritten?.(error);
        }),
    });
  }

  private startChild(options: ConstructorParameters<typeof CliConnection>[0]): ClaudeProcess {
    const { plan } = options;
    return new ClaudeProcess({
      binaryPath: options.binaryPath,
      argv: buildClaudeArguments({
        configuration: plan.configuration,
        conversation: plan.conversation,
        ephemeral: plan.ephemeral,
        awaitClaim: plan.awaitClaim,
        ...(this.promptFile ? { appendSystemPromptFile: this.promptFile.path } : {}),
      }),
      environment: plan.environment,
      cwd: plan.cwd,
      ...(options.priority ? { priority: options.priority } : {}),
      onLine: (line) => this.onLine(line),
      takeLine: (text) => {
        this.streaming = this.deltas.takeLine(text);
        return this.streaming;
      },
      afterRead: () => this.deltas.afterRead(),
      ...(options.stdoutChannel ? { stdoutChannel: options.stdoutChannel, streaming: () => this.streaming } : {}),
      onExit: (exit) => this.onExit(exit),
    });
  }

  get process(): ConnectionProcess | undefined {
    const pid = this.child.pid;
    return pid === undefined ? undefined : { pid, startTime: this.child.startTime, marker: this.child.marker };
  }

  get running(): boolean {
    return this.child.running;
  }

  send(message: ClaudeUserMessage): boolean {
    return this.child.write(message, (error) => this.afterWrite(error));
  }

  /** A write the pipe refused (EPIPE: the CLI closed its stdin) is reported once. */
  private afterWrite(error: Error | null | undefined): void {
    if (!error || this.inputFailed) return;
    this.inputFailed = true;
    this.listener.onInputFailed();
  }

  request(request: ClaudeControlRequest, options: { timeoutMs?: number } = {}): Promise<unknown> {
    const { subtype, ...payload } = request;
    // A stop means stop: queued input is dropped with the running turn, not run afterwards.
    const body = subtype === 'interrupt' ? { cancel_queued: true } : payload;
    return this.control.request(subtype, body, options);
  }

  answerPrompt(requestId: string, response: Record<string, unknown>): Promise<boolean> {
    return this.control.respond(requestId, response);
  }

  stop(options: { busy: boolean; force?: boolean }): Promise<void> {
    return this.child.stop(options);
  }

  async swept(): Promise<void> {
    await this.child.swept;
  }

  private onLine(line: DecodedLine): void {
    if (this.promptFile) this.forgetPromptFile();
    this.streaming = line.kind === 'json' && this.deltas.offer(line.value);
    if (this.streaming) return;
    this.deltas.flush();
    if (line.kind === 'junk') return this.listener.onNote('claude.stdout_not_json');
    if (line.kind === 'oversized') return this.listener.onNote('claude.stdout_line_too_long');
    this.onValue(line.value);
  }

  private onValue(value: unknown): void {
    const frame = parseCliFrame(value);
    switch (frame.kind) {
      case 'control_response':
        this.control.handleResponse(frame.frame);
        return;
      case 'control_cancel_request':
        this.listener.onPromptWithdrawn(frame.frame.request_id);
        return;
      case 'control_request': {
        const { request_id: requestId, request } = frame.frame;
        if (request.subtype === 'can_use_tool') return this.listener.onPrompt(requestId, request);
        // Requests Tether does not serve (hooks, MCP over stdio, ...) get an error answer, never silence.
        this.child.write({
          type: 'control_response',
          response: {
            subtype: 'error',
            request_id: requestId,
            error: `Unsupported control request subtype: ${request.subtype}`,
          },
        });
        return;
      }
      default:
        this.listener.onFrame(frame);
    }
  }

  private forgetPromptFile(): void {
    this.promptFile?.remove();
    this.promptFile = undefined;
  }

  private onExit(exit: ProcessExit): void {
    this.forgetPromptFile();
    this.deltas.flush();
    this.control.cancelAll(
      new AgentError({
        code: 'provider_crashed',
        message: 'The claude CLI exited.',
        details: { reason: 'process_exited' },
      }),
    );
    this.listener.onEnd(exit);
  }
}
