import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Where Claude Code reads the settings an administrator manages, on this platform. */
function managedSettingsFile(): string {
  if (process.platform === 'darwin') return '/Library/Application Support/ClaudeCode/managed-settings.json';
  if (process.platform === 'win32') return 'C:\\Program Files\\ClaudeCode\\managed-settings.json';
  return '/etc/claude-code/managed-settings.json';
}

/**
 * The settings every agent started with `environment` reads wherever it runs: the user's
 * (`$CLAUDE_CONFIG_DIR`, default `~/.claude`) and the managed ones. A `model`, an `env` or an
 * `availableModels` there changes the model list, so a list kept across such an edit would be stale.
 */
function settingsFilesOf(environment: Record<string, string>): string[] {
  const configFolder =
    environment.CLAUDE_CONFIG_DIR ??
    (environment.HOME === undefined ? undefined : path.join(environment.HOME, '.claude'));
  return [...(configFolder === undefined ? [] : [path.join(configFolder, 'settings.json')]), managedSettingsFile()];
}

/** What those settings files hold now (a missing or unreadable one as such): equal fingerprints, the same list. */
export function settingsFingerprint(environment: Record<string, string>): string {
  const hash = createHash('sha256');
  for (const file of settingsFilesOf(environment)) {
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch (error) {
      content = `\0${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`;
    }
    hash.update(JSON.stringify([file, content]));
  }
  return hash.digest('hex');
}
