import { type LoggerOptions, pino } from 'pino';

type LogMethod = (fields: Record<string, unknown>, message?: string) => void;

/** What the daemon needs of a logger: pino's methods, so a pino logger (or a compatible one) fits. */
export interface DaemonLogger {
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;
}

function isLogger(value: DaemonLogger | LoggerOptions): value is DaemonLogger {
  return (
    typeof (value as Partial<DaemonLogger>).info === 'function' &&
    typeof (value as Partial<DaemonLogger>).error === 'function'
  );
}

/**
 * The daemon's logger: the caller's, or a new pino logger writing JSON lines to stdout. Log lines
 * carry method, route, status, duration, session id and error code; never prompt text, tokens or
 * secrets (the Authorization header and bodies are never logged).
 */
export function createLogger(
  option: DaemonLogger | LoggerOptions | undefined,
  destination?: { write(line: string): unknown },
): DaemonLogger {
  if (option !== undefined && isLogger(option)) return option;
  const options = { name: 'tether-daemon', ...option };
  return destination === undefined ? pino(options) : pino(options, destination);
}
