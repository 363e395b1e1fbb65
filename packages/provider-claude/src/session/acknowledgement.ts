import type { CliFrame } from '../frames/cli-frame-schemas.js';

/**
 * Whether a frame shows the CLI took the input stamped `uuid`. Lines still in the pipe from the
 * previous turn do not count, so only frames that name the input (or end a turn) do.
 */
export function acknowledgesInput(frame: CliFrame, uuid: string): boolean {
  switch (frame.kind) {
    case 'command_lifecycle':
      return frame.frame.command_uuid === uuid;
    case 'system':
    case 'stream_event':
      return frame.frame.user_message_uuids?.includes(uuid) ?? false;
    case 'result':
      return true;
    default:
      return false;
  }
}
