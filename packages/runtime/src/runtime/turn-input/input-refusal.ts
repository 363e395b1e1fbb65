import { AgentError } from '@tether/protocol';

/** Why a submitted part was refused: the stable details.reason of the invalid_command. */
export type InputRefusalReason =
  | 'image_invalid_base64'
  | 'image_unreadable_file'
  | 'image_media_type_mismatch'
  | 'not_an_image'
  | 'image_unreadable'
  | 'image_too_large'
  | 'image_dimensions_too_large'
  | 'too_many_images'
  | 'images_too_large_together'
  | 'file_outside_workspace'
  | 'file_not_found'
  | 'file_not_mentionable'
  | 'file_not_regular'
  | 'file_kind_changed';

/** A part of submit_turn's input Tether cannot pass on; the message names the part and says what to send instead. */
export function inputRefusal(reason: InputRefusalReason, message: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason } });
}
