/**
 * Lifecycle scenarios: interrupt latency, close latency (idle and busy), open session → first
 * delta (cold, warm, warm pool), crash detection, memory per idle open session, and a soak of
 * open/turn/close cycles. Each Tether figure is measured beside a raw-loop baseline in the same
 * run where one exists (the raw side: claude spawned with Tether's argv and environment, driven
 * over stdin/stdout directly). Sequential throughout: the CLI alone uses ~1.4 of 2 cores.
 *
 * One module per scenario; this one gathers what bench/run-benchmarks.mjs imports.
 */
export { measureCrashes } from './crash-detection.mjs';
export { measureMemory } from './idle-session-memory.mjs';
export { measureInterrupts } from './interrupt-latency.mjs';
export { measureLifecycle } from './session-lifecycle.mjs';
export { measureSoak } from './soak.mjs';
export { warmPoolAvailable } from './warm-pool.mjs';
