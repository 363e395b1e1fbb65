import { statSync } from 'node:fs';
import path from 'node:path';
import { claudeConfigDirectory } from '../launch/claude-config-directory.js';

/** Where Claude Code reads the settings an administrator manages, on this platform. */
function managedSettingsFile(): string {
  if (process.platform === 'darwin') return '/Library/Application Support/ClaudeCode/managed-settings.json';
  if (process.platform === 'win32') return 'C:\\Program Files\\ClaudeCode\\managed-settings.json';
  return '/etc/claude-code/managed-settings.json';
}

/**
 * The settings every agent started with `environment` reads wherever it runs: the user's
 * (claudeConfigDirectory) and the managed ones. A `model`, an `env` or an `availableModels` there
 * changes the model list, so a list kept across such an edit would be stale.
 */
function settingsFilesOf(environment: Record<string, string>): string[] {
  const configFolder = claudeConfigDirectory(environment);
  return [...(configFolder === undefined ? [] : [path.join(configFolder, 'settings.json')]), managedSettingsFile()];
}

/**
 * Those settings files as they are now, by their status (a missing or unreadable one as such): an
 * edit changes it. Read when an agent starts, so two `stat`s and no read nor hash: a file touched but
 * not changed only costs the list a read again.
 */
export function settingsFingerprint(environment: Record<string, string>): string {
  return JSON.stringify(
    settingsFilesOf(environment).map((file) => {
      try {
        const status = statSync(file, { throwIfNoEntry: false });
        return status ? [file, status.ino, status.size, status.mtimeMs, status.ctimeMs] : [file, 'missing'];
      } catch (error) {
        return [file, (error as NodeJS.ErrnoException).code ?? 'unreadable'];
      }
    }),
  );
}
