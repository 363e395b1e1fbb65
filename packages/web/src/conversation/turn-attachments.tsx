import { useEffect, useState } from 'react';
import type { RecordedImagePart } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';
import type { RunAttachment } from './conversation-state.js';

function describeImage(part: RecordedImagePart, position: number): string {
  const kind = part.mediaType.replace('image/', '').toUpperCase();
  return `Image ${position} of the turn (${kind}, ${part.width}×${part.height})`;
}

/**
 * An image a turn carried, read from the session's blobs (the log holds only its sha256) into an
 * object URL, given back when the image leaves the page.
 */
function TurnImage({
  sessionId,
  part,
  position,
}: {
  readonly sessionId: string;
  readonly part: RecordedImagePart;
  readonly position: number;
}) {
  const { client } = useDaemon();
  const [source, setSource] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let url: string | null = null;
    let stopped = false;
    client.readBlob(sessionId, part.sha256).then(
      (blob) => {
        if (stopped) return;
        // The type the turn recorded (checked by content at submit), not whatever the answer says.
        url = URL.createObjectURL(new Blob([blob.bytes as Uint8Array<ArrayBuffer>], { type: part.mediaType }));
        setSource(url);
      },
      () => {
        if (!stopped) setFailed(true);
      },
    );
    return () => {
      stopped = true;
      if (url !== null) URL.revokeObjectURL(url);
    };
  }, [client, sessionId, part.sha256, part.mediaType]);
  const alt = describeImage(part, position);
  if (failed) return <span className="attachment-chip attachment-missing">{alt}: not available</span>;
  return source === null ? (
    <span className="turn-image turn-image-loading" role="img" aria-label={`${alt}, loading`} />
  ) : (
    <img className="turn-image" src={source} alt={alt} width={part.width} height={part.height} />
  );
}

/** What a turn carried besides its text: images shown, file references as chips with their path. */
export function TurnAttachments({
  sessionId,
  attachments,
}: {
  readonly sessionId: string;
  readonly attachments: readonly RunAttachment[];
}) {
  if (attachments.length === 0) return null;
  let images = 0;
  return (
    <div className="turn-attachments">
      {attachments.map((part, index) =>
        part.type === 'image' ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: a turn's input never changes, so a position names one part for good.
          <TurnImage key={index} sessionId={sessionId} part={part} position={++images} />
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: as above.
          <span key={index} className="attachment-chip" title="A file of the workspace the turn referred to">
            <span aria-hidden="true">📄 </span>
            {part.path}
          </span>
        ),
      )}
    </div>
  );
}
