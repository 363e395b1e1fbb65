import type { ImageAttachment } from './image-attachments.js';

/** An image waiting in the composer, with the object URL its thumbnail shows. */
export interface PreviewedImage {
  readonly attachment: ImageAttachment;
  readonly previewUrl: string;
}

/** The thumbnails of the images that go with the next turn, each with a button to take it out. */
export function ImagePreviews({
  images,
  onRemove,
}: {
  readonly images: readonly PreviewedImage[];
  readonly onRemove: (id: string) => void;
}) {
  if (images.length === 0) return null;
  return (
    <ul className="image-previews" aria-label="Images to send">
      {images.map(({ attachment, previewUrl }) => (
        <li key={attachment.id} className="image-preview">
          <img
            src={previewUrl}
            alt={`${attachment.name} (${attachment.facts.width}×${attachment.facts.height})`}
            width={attachment.facts.width}
            height={attachment.facts.height}
          />
          <button type="button" aria-label={`Remove ${attachment.name}`} onClick={() => onRemove(attachment.id)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
