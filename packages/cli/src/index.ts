export { main, mainUsage } from './main.js';
export { processContext } from './cli-context.js';
export type { CliContext } from './cli-context.js';
export { VERSION } from './version.js';
