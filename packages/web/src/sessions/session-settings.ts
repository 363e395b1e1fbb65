import { PermissionMode, type SessionSnapshot } from '@tether/protocol';
import { permissionModeLabels } from '../format/format-values.js';

/** The model and permission mode a session runs with; null: the agent's own default. */
export interface SessionSettings {
  readonly model: string | null;
  readonly mode: PermissionMode | null;
}

/**
 * What a snapshot says the session runs with: as the agent last reported it, else as the session was
 * opened with (a model or mode typed in the form is in effect before the agent first reports it). A
 * fork's snapshot carries its source's: the agent reports a setting only when it differs, so a
 * fork's own events may never name them.
 */
export function snapshotSettings(
  snapshot: Pick<SessionSnapshot, 'model' | 'permissionMode' | 'configuration'>,
): SessionSettings {
  const configuredModel = snapshot.configuration['model'];
  const configuredMode = PermissionMode.safeParse(snapshot.configuration['permissionMode']);
  return {
    model: snapshot.model ?? (typeof configuredModel === 'string' && configuredModel !== '' ? configuredModel : null),
    mode: snapshot.permissionMode ?? (configuredMode.success ? configuredMode.data : null),
  };
}

export function modelLabel(model: string | null): string {
  return model ?? 'default model';
}

export function modeLabel(mode: PermissionMode | null): string {
  return mode === null ? 'default mode' : (permissionModeLabels[mode] ?? mode);
}
