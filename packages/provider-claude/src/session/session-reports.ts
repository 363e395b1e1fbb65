import type { PlanLimits } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import type { ClaudeConnection } from '../connection/claude-connection.js';
import type { RateLimitEventFrame } from '../frames/cli-frame-schemas.js';
import { limitsFromUsage, limitsWithWindow, sameLimits, windowFromRateLimitInfo } from '../translate/rate-limits.js';
import { toContextUsage } from './context-usage.js';

/** How long a report may take before it is given up (it is never waited for by a run). */
const reportTimeoutMs = 10_000;

/**
 * What the session reports about the account and the conversation beside its runs: the plan limits
 * (asked once per agent process with get_usage, then followed through rate_limit_event frames) and
 * how full the context is after each run (get_context_usage, summary detail: no API calls). Both
 * are asked in the background and dropped when the session stopped or the agent changed meanwhile.
 */
export class SessionReports {
  private readonly emit: (part: AgentProviderV1Part) => void;
  private readonly current: () => ClaudeConnection | null;
  private limits: PlanLimits | null = null;
  private limitsAskedOf: ClaudeConnection | null = null;

  constructor(options: { emit: (part: AgentProviderV1Part) => void; current: () => ClaudeConnection | null }) {
    this.emit = options.emit;
    this.current = options.current;
  }

  /** Once per agent process, after its first frame: the plan limits as get_usage reports them. */
  askLimits(connection: ClaudeConnection): void {
    if (this.limitsAskedOf === connection) return;
    this.limitsAskedOf = connection;
    connection.request({ subtype: 'get_usage', skip_behaviors: true }, { timeoutMs: reportTimeoutMs }).then(
      (answer) => {
        if (this.current() !== connection) return;
        // A subscription's windows from rate_limit_event frames are newer than an answer without any.
        if (this.limits?.available) return;
        this.report(limitsFromUsage(answer, new Date().toISOString()));
      },
      // An agent without get_usage (an older CLI, an SDK without the method) reports nothing.
      () => undefined,
    );
  }

  onRateLimitEvent(frame: RateLimitEventFrame): void {
    const window = windowFromRateLimitInfo(frame.rate_limit_info);
    if (window) this.report(limitsWithWindow(this.limits, window, new Date().toISOString()));
  }

  /**
   * After a run's end: how full the context is now. Skipped when no agent runs. Without the run's id:
   * the answer comes after the run ended, and the runtime keeps a part naming a run only while that
   * run is active.
   */
  measureContext(): void {
    const connection = this.current();
    if (!connection?.running) return;
    connection.request({ subtype: 'get_context_usage', detail: 'summary' }, { timeoutMs: reportTimeoutMs }).then(
      (answer) => {
        if (this.current() !== connection) return;
        const contextUsage = toContextUsage(answer as Record<string, unknown> | undefined);
        this.emit({ type: 'session.context_measured', contextUsage });
      },
      () => undefined,
    );
  }

  private report(limits: PlanLimits): void {
    if (sameLimits(this.limits, limits)) return;
    this.limits = limits;
    this.emit({ type: 'session.limits_changed', limits });
  }
}
