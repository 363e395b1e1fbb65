/** One line a recording logger took: its level, its structured fields and its message. */
export interface RecordedLogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

type LogMethod = (fields: Record<string, unknown>, message?: string) => void;

/** A logger of the daemon's shape (fields, then a message) that keeps every line, for a test to read. */
export function recordingLogger(): {
  logger: { debug: LogMethod; info: LogMethod; warn: LogMethod; error: LogMethod };
  lines: RecordedLogLine[];
} {
  const lines: RecordedLogLine[] = [];
  const at =
    (level: RecordedLogLine['level']): LogMethod =>
    (fields, message) => {
      lines.push({ level, fields, message });
    };
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}
