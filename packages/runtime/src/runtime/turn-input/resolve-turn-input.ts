import { createHash } from 'node:crypto';
import {
  AgentError,
  FileInputPart,
  ImageDataInputPart,
  ImagePathInputPart,
  type InputPart,
  type SubmitTurnCommand,
  agentDirectory,
  imageLimits,
  inputPartPosition,
} from '@tether/protocol';
import type { AgentProviderV1, AgentProviderV1InputPart, AgentProviderV1Turn } from '@tether/provider-spec';
import type { SessionRecord } from '../../store/tether-store.js';
import { unsupported } from '../runtime-errors.js';
import { inputRefusal } from './input-refusal.js';
import { type ResolvedImage, resolveImage } from './resolve-image.js';
import { type ResolvedFileReference, resolveFileReference } from './resolve-file-reference.js';

/** A turn's input, read and checked: what the log records, what the agent gets, and the bytes to store. */
export interface ResolvedTurnInput {
  readonly recorded: InputPart[];
  readonly provider: AgentProviderV1InputPart[];
  /** Each image's bytes once (by hash), for the store. */
  readonly images: { readonly sha256: string; readonly mediaType: string; readonly bytes: Uint8Array }[];
  /** The file references as resolved, to check again when the turn waits as a follow-up (checkFilesStillThere). */
  readonly files: FileReferences;
}

/** A turn's file references as resolved at submit, by their place in the turn. */
export interface FileReferences {
  /** How many parts the turn has (for a refusal's "part 2 of 3"). */
  readonly partCount: number;
  readonly references: readonly { readonly index: number; readonly reference: ResolvedFileReference }[];
}

/** Where a turn's files are looked for: the agent's directory, and a worktree's repository. */
export interface TurnInputPlace {
  readonly workspace: string;
  readonly repository?: string | undefined;
}

/** Where a session's turns look for their files (a worktree session: in its worktree, or named by its repository). */
export function turnInputPlace(record: Pick<SessionRecord, 'workspace' | 'workspaceStatus'>): TurnInputPlace {
  const { workspace, workspaceStatus } = record;
  return { workspace: agentDirectory(workspace, workspaceStatus), repository: workspaceStatus?.worktree?.repository };
}

type SubmittedPart = SubmitTurnCommand['input'][number];

/**
 * Refuses, before anything is read, a part type the session's provider cannot take. Without a
 * provider (not configured here) the turn goes on, to fail provider_unavailable as any turn would.
 */
export function requireInputCapabilities(provider: AgentProviderV1 | null, input: readonly SubmittedPart[]): void {
  if (!provider) return;
  input.forEach((part, index) => {
    const can = provider.capabilities;
    if (!can.inputParts.includes(part.type) || (part.type === 'image' && !can.images)) {
      const advice = part.type === 'file' ? 'name the file in the text instead' : 'send the content as text';
      throw unsupported(
        provider,
        `take ${part.type} input parts (part ${index} is one); ${advice}, or use a provider that takes them`,
        part.type === 'image' ? 'images' : 'input_part_type',
      );
    }
  });
}

/**
 * Reads and checks every part of a turn (images by their bytes, file references inside the
 * workspace, or in a worktree's repository), all before anything is recorded: a turn is refused whole, with the first bad part.
 * parseCommand has already checked each part's shape.
 */
export async function resolveTurnInput(
  input: readonly SubmittedPart[],
  where: TurnInputPlace,
): Promise<ResolvedTurnInput> {
  const { workspace } = where;
  const imagesInTurn = input.filter((part) => part.type === 'image').length;
  if (imagesInTurn > imageLimits.maxImages) {
    throw inputRefusal(
      'too_many_images',
      `The turn carries ${imagesInTurn} images; the limit is ${imageLimits.maxImages}. Send fewer images per turn.`,
    );
  }
  const recorded: InputPart[] = [];
  const provider: AgentProviderV1InputPart[] = [];
  const images = new Map<string, ResolvedImage>();
  const references: FileReferences['references'][number][] = [];
  let totalImageBytes = 0;
  for (const [index, part] of input.entries()) {
    // Counted from 1, as a person reads a list; details.index keeps the zero-based index for programs.
    const position = inputPartPosition(index, input.length);
    if (part.type === 'text') {
      const text = String(part['text']);
      recorded.push({ type: 'text', text });
      provider.push({ type: 'text', text });
    } else if (part.type === 'image') {
      const image = await ofPart(index, resolveImage(imagePart(part), { workspace, position, imagesInTurn }));
      totalImageBytes += image.bytes.length;
      if (totalImageBytes > imageLimits.maxTotalBytes) {
        // Named like the other refusals of one part, so a command line can say which of its images it was.
        throw new AgentError({
          code: 'invalid_command',
          message: `Input part ${position}: with it, the turn's images add up to more than ${imageLimits.maxTotalBytes / 1024 / 1024} MB. Send fewer or smaller images per turn.`,
          details: { reason: 'images_too_large_together', index },
        });
      }
      const sha256 = createHash('sha256').update(image.bytes).digest('hex');
      images.set(sha256, image);
      const { mediaType, width, height } = image;
      recorded.push({ type: 'image', mediaType, sha256, byteLength: image.bytes.length, width, height });
      provider.push({ type: 'image', mediaType, data: Buffer.from(image.bytes).toString('base64') });
    } else {
      const file = await ofPart(index, resolveFileReference(FileInputPart.parse(part), { ...where, position }));
      recorded.push({ type: 'file', path: file.workspacePath });
      provider.push({ type: 'file', path: file.path, workspacePath: file.workspacePath });
      references.push({ index, reference: file });
    }
  }
  return {
    recorded,
    provider,
    images: [...images].map(([sha256, image]) => ({ sha256, mediaType: image.mediaType, bytes: image.bytes })),
    files: { partCount: input.length, references },
  };
}

/**
 * Checks a turn's file references again, as at submit, when it is about to start later (a queued
 * follow-up): each must still be there, inside the workspace, and the same kind (file or directory).
 * Rejects with the first part's refusal (invalid_command, details.reason and details.index).
 * Images need no second look: their bytes were read at submit.
 */
export async function checkFilesStillThere(files: FileReferences, where: TurnInputPlace): Promise<void> {
  for (const { index, reference } of files.references) {
    const position = inputPartPosition(index, files.partCount);
    await ofPart(
      index,
      resolveFileReference(
        { type: 'file', path: reference.path },
        { ...where, position, resolvedBefore: reference.kind },
      ),
    );
  }
}

/**
 * The turn as the provider gets it: with its files looked at again (checkFilesStillThere) when the
 * provider held it back before the agent got it (a process slot), where they are then.
 */
export function turnForAgent(
  runId: string,
  input: readonly AgentProviderV1InputPart[],
  files: FileReferences,
  place: () => TurnInputPlace,
): AgentProviderV1Turn {
  if (files.references.length === 0) return { runId, input };
  return { runId, input, recheckInput: () => checkFilesStillThere(files, place()) };
}

function imagePart(part: SubmittedPart): ImageDataInputPart | ImagePathInputPart {
  return 'data' in part ? ImageDataInputPart.parse(part) : ImagePathInputPart.parse(part);
}

/** A part's refusal also names the part by its zero-based index (details.index), for programs. */
async function ofPart<T>(index: number, resolving: Promise<T>): Promise<T> {
  try {
    return await resolving;
  } catch (error) {
    if (!AgentError.isInstance(error)) throw error;
    const { code, message, retryable, details } = error;
    throw new AgentError({ code, message, retryable, details: { ...details, index } });
  }
}
