import { randomUUID } from 'node:crypto';
import { AgentError } from '@tether/protocol';
import type { ControlResponseFrame } from '../frames/cli-frame-schemas.js';
import { refusalReason } from './refusal-reason.js';

interface PendingRequest {
  readonly resolve: (response: unknown) => void;
  readonly reject: (error: AgentError) => void;
  timer: NodeJS.Timeout | undefined;
}

export interface ControlChannelOptions {
  /** Writes one line to the CLI; false when it could not be written; `onWritten` learns whether it reached the pipe. */
  readonly write: (message: object, onWritten?: (error: Error | null | undefined) => void) => boolean;
  readonly defaultTimeoutMs?: number;
}

/**
 * The host side of the CLI's control protocol: our requests get an id, a timeout and a way to
 * be cancelled; answers are matched by request_id; answers to the CLI's own requests go out
 * exactly once per id.
 */
export class ControlChannel {
  private readonly options: ControlChannelOptions;
  private readonly pending = new Map<string, PendingRequest>();
  private readonly answered = new Set<string>();

  constructor(options: ControlChannelOptions) {
    this.options = options;
  }

  /** Sends a control request and resolves with the CLI's success payload. */
  request(
    subtype: string,
    payload: Record<string, unknown> = {},
    options: { timeoutMs?: number } = {},
  ): Promise<unknown> {
    const requestId = `tether-${randomUUID()}`;
    return new Promise((resolve, reject) => {
      const pending: PendingRequest = { resolve, reject, timer: undefined };
      this.pending.set(requestId, pending);
      const written = this.options.write({
        type: 'control_request',
        request_id: requestId,
        request: { subtype, ...payload },
      });
      if (written) {
        // Set once the request is written: a timer made before it delayed a stop's request (~0.02 ms,
        // cold). An answer the write itself brought (a transport in this process) needs none.
        if (this.pending.get(requestId) !== pending) return;
        const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs ?? 30_000;
        pending.timer = setTimeout(() => {
          this.pending.delete(requestId);
          reject(
            new AgentError({
              code: 'provider_contract_violation',
              message: `The claude CLI did not answer the ${subtype} request within ${timeoutMs} ms.`,
              details: { reason: 'control_timeout' },
            }),
          );
        }, timeoutMs);
        pending.timer.unref();
      } else {
        this.pending.delete(requestId);
        reject(
          new AgentError({
            code: 'provider_crashed',
            message: 'The claude CLI is not accepting input any more.',
            details: { reason: 'stdin_closed' },
          }),
        );
      }
    });
  }

  /** Routes a control_response frame; false when it answers nothing we asked. */
  handleResponse(frame: ControlResponseFrame): boolean {
    const pending = this.pending.get(frame.response.request_id);
    if (!pending) return false;
    this.pending.delete(frame.response.request_id);
    clearTimeout(pending.timer);
    if (frame.response.subtype === 'success') {
      pending.resolve(frame.response.response);
    } else {
      const code = refusalReason(frame.response.error_code, frame.response.error) ?? 'error';
      pending.reject(
        new AgentError({
          code: 'provider_execution_error',
          message: 'The claude CLI refused the control request.',
          details: { reason: code },
        }),
      );
    }
    return true;
  }

  /**
   * Answers one of the CLI's own requests (e.g. can_use_tool); a second answer to the same id is not
   * sent. Resolves true once the answer reached the CLI's input, false when it could not.
   */
  respond(requestId: string, response: Record<string, unknown>): Promise<boolean> {
    if (this.answered.has(requestId)) return Promise.resolve(false);
    this.answered.add(requestId);
    return new Promise((resolve) => {
      const written = this.options.write(
        { type: 'control_response', response: { subtype: 'success', request_id: requestId, response } },
        (error) => resolve(!error),
      );
      if (!written) resolve(false);
    });
  }

  /** Fails every request still waiting (the process ended). */
  cancelAll(error: AgentError): void {
    for (const [requestId, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
      this.pending.delete(requestId);
    }
  }
}
