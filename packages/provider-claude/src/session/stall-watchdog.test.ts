import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StallWatchdog } from './stall-watchdog.js';

describe('StallWatchdog', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports a stall only once the whole timeout passed since the last touch', () => {
    const onStall = vi.fn();
    const watchdog = new StallWatchdog({ timeoutMs: 1000, waitingOnApi: () => true, onStall });
    watchdog.touch();
    vi.advanceTimersByTime(900);
    watchdog.touch();
    // The first timer fires at 1,000 ms, 100 ms after the last touch: no stall yet.
    vi.advanceTimersByTime(999);
    expect(onStall).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onStall).toHaveBeenCalledTimes(1);
    watchdog.stop();
  });

  it('re-arms instead of reporting while the run is not waiting on the API', () => {
    const onStall = vi.fn();
    let waiting = false;
    const watchdog = new StallWatchdog({ timeoutMs: 500, waitingOnApi: () => waiting, onStall });
    watchdog.touch();
    vi.advanceTimersByTime(1500);
    expect(onStall).not.toHaveBeenCalled();
    waiting = true;
    vi.advanceTimersByTime(500);
    expect(onStall).toHaveBeenCalledTimes(1);
    watchdog.stop();
  });

  it('never fires once stopped', () => {
    const onStall = vi.fn();
    const watchdog = new StallWatchdog({ timeoutMs: 100, waitingOnApi: () => true, onStall });
    watchdog.touch();
    watchdog.stop();
    vi.advanceTimersByTime(1000);
    expect(onStall).not.toHaveBeenCalled();
  });
});
