import { useFocusKeptIn } from '../focus/use-focus-kept-in.js';
import {
  type ClipboardEvent,
  type DragEvent,
  type FormEvent,
  type KeyboardEvent,
  useEffect,
  useRef,
  useState,
} from 'react';
import type { ImageDataInputPart, InputDelivery } from '@tether/protocol';
import { readDraft, storeDraft } from './draft-storage.js';
import { type ImageAttachment, attachImage } from './image-attachments.js';
import { ImagePreviews, type PreviewedImage } from './image-previews.js';

export interface ComposerProps {
  /** Whose draft the field holds: it is kept per session while the reader is elsewhere. */
  readonly sessionId: string;
  readonly running: boolean;
  readonly closed: boolean;
  readonly stopping: boolean;
  /** False when the session's agent takes no images (its capabilities say so): pasting one says why. */
  readonly acceptsImages: boolean;
  /** False when the session's agent cannot take a follow-up into a running turn: no steer toggle. */
  readonly canSteer: boolean;
  /**
   * Resolves once the daemon recorded the turn; rejects to keep the text and images for another
   * try. `delivery` says what to do if a run is active: queue it as the next turn, or steer it in.
   */
  readonly onSend: (text: string, images: readonly ImageDataInputPart[], delivery: InputDelivery) => Promise<void>;
  /** Follow-ups queued as next turns: Stop would start the first of them at once, so "Stop all" is offered too. */
  readonly queuedTurns: number;
  /** Interrupts the run; with `dropQueued` its queued follow-ups are withdrawn as well instead of running next. */
  readonly onStop: (dropQueued: boolean) => void;
}

function hasFiles(transfer: DataTransfer | null): transfer is DataTransfer {
  return transfer?.types.includes('Files') === true;
}

/**
 * Write a turn; Enter sends, Shift+Enter starts a new line; Stop interrupts the active run, and with
 * follow-ups queued, "Stop all" withdraws them too (Stop alone runs the next at once). While a
 * run works the composer stays open: Enter queues the message as the next turn, and with the steer
 * toggle (or Ctrl/Cmd+Enter) it goes into the running turn instead. Images pasted or dropped on it
 * wait as thumbnails (each removable) and go with the text.
 */
export function Composer({
  sessionId,
  running,
  closed,
  stopping,
  acceptsImages,
  canSteer,
  onSend,
  queuedTurns,
  onStop,
}: ComposerProps) {
  const [steer, setSteer] = useState(false);
  const [text, setTextState] = useState(() => readDraft(sessionId));
  const setText = (next: string) => {
    setTextState(next);
    storeDraft(sessionId, next);
  };
  const [images, setImages] = useState<readonly PreviewedImage[]>([]);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [dropping, setDropping] = useState(false);
  const nextId = useRef(0);
  const field = useRef<HTMLTextAreaElement>(null);
  const form = useRef<HTMLFormElement>(null);
  // A session just opened from the form (its button gone) or reached by a link leaves the focus on
  // the page: the message field takes it then; a focus the person has elsewhere (the list) stays there.
  useEffect(() => {
    if (document.activeElement === document.body || document.activeElement === null) field.current?.focus();
  }, []);
  const previews = useRef(images);
  previews.current = images;
  // Thumbnails are object URLs of the files: give them back when the composer goes.
  useEffect(() => () => previews.current.forEach((image) => URL.revokeObjectURL(image.previewUrl)), []);

  const canSend = !closed && !sending && (text.trim() !== '' || images.length > 0);
  const send = async (steering: boolean) => {
    if (!canSend) return;
    setSending(true);
    const sentText = text;
    const sentImages = images;
    try {
      await onSend(
        sentText,
        sentImages.map((image) => image.attachment.part),
        steering && running && canSteer ? 'steer' : 'after_turn',
      );
      // Only what was sent goes: what the user typed or added while it was on its way stays.
      setTextState((current) => {
        const left = current.startsWith(sentText) ? current.slice(sentText.length).trimStart() : current;
        storeDraft(sessionId, left);
        return left;
      });
      for (const image of sentImages) URL.revokeObjectURL(image.previewUrl);
      setImages((current) => current.filter((image) => !sentImages.includes(image)));
      setRefusal(null);
    } catch {
      // The session view shows why; the text and images stay for another try.
    } finally {
      setSending(false);
    }
  };
  const addFiles = async (files: readonly File[]) => {
    if (files.length === 0) return;
    if (!acceptsImages) {
      setRefusal("This session's agent does not take images.");
      return;
    }
    let waiting: readonly ImageAttachment[] = previews.current.map((image) => image.attachment);
    const added: PreviewedImage[] = [];
    let refused: string | null = null;
    for (const file of files) {
      const result = attachImage(
        `image-${nextId.current++}`,
        file.name || 'The pasted image',
        new Uint8Array(await file.arrayBuffer()),
        waiting,
      );
      if (typeof result === 'string') {
        refused ??= result;
        continue;
      }
      waiting = [...waiting, result];
      added.push({ attachment: result, previewUrl: URL.createObjectURL(file) });
    }
    setRefusal(refused);
    if (added.length > 0) setImages((current) => [...current, ...added]);
  };
  const remove = (id: string) => {
    const image = images.find((candidate) => candidate.attachment.id === id);
    if (image !== undefined) URL.revokeObjectURL(image.previewUrl);
    setImages(images.filter((candidate) => candidate.attachment.id !== id));
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void send(steer);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      // Ctrl/Cmd+Enter steers whatever the toggle says; Enter follows the toggle.
      void send(steer || event.ctrlKey || event.metaKey);
    }
  };
  const steerable = running && canSteer;
  // Only pasted files are taken here; pasted text goes into the field as usual.
  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    if (closed || event.clipboardData.files.length === 0) return;
    event.preventDefault();
    void addFiles([...event.clipboardData.files]);
  };
  const onDragOver = (event: DragEvent<HTMLFormElement>) => {
    if (closed || !hasFiles(event.dataTransfer)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    setDropping(true);
  };
  const onDrop = (event: DragEvent<HTMLFormElement>) => {
    setDropping(false);
    if (closed || !hasFiles(event.dataTransfer)) return;
    event.preventDefault();
    void addFiles([...event.dataTransfer.files]);
  };
  // Stop and Stop all go from under the keyboard (disabled while stopping, then gone with the run):
  // the focus stays in the composer, on the message field.
  useFocusKeptIn(form, `${running}:${stopping}:${queuedTurns}`);
  return (
    <form
      ref={form}
      className={`composer${dropping ? ' composer-dropping' : ''}`}
      aria-label="Send a turn"
      onSubmit={submit}
      onDragOver={onDragOver}
      onDragLeave={() => setDropping(false)}
      onDrop={onDrop}
    >
      <ImagePreviews images={images} onRemove={remove} />
      {refusal === null ? null : (
        <p className="notice notice-error composer-refusal" role="alert">
          {refusal}
        </p>
      )}
      <div className="composer-row">
        <textarea
          ref={field}
          aria-label="Message"
          placeholder={
            closed
              ? 'This session is closed.'
              : running
                ? steerable
                  ? steer
                    ? 'Steer the running turn… (Enter steers; Shift+Enter for a new line)'
                    : 'Follow up… (Enter queues it as the next turn, Ctrl/Cmd+Enter steers it into this one)'
                  : 'Follow up… (Enter queues it as the next turn)'
                : 'Ask Claude… (Enter sends, Shift+Enter for a new line; paste or drop images)'
          }
          rows={2}
          value={text}
          disabled={closed}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
        />
        <div className="composer-actions">
          {steerable ? (
            <label className="composer-steer" title="Ctrl/Cmd+Enter steers without the toggle">
              <input type="checkbox" checked={steer} onChange={(event) => setSteer(event.target.checked)} /> Steer
            </label>
          ) : null}
          {running ? (
            <button
              type="button"
              className="button-stop"
              aria-label={stopping ? 'Stopping the run' : 'Stop the run'}
              disabled={stopping}
              onClick={() => onStop(false)}
            >
              {stopping ? 'Stopping…' : 'Stop'}
            </button>
          ) : null}
          {running && queuedTurns > 0 ? (
            <button
              type="button"
              className="button-stop"
              aria-label={`Stop all: the run, and the ${queuedTurns === 1 ? 'queued follow-up' : `${queuedTurns} queued follow-ups`} withdrawn`}
              disabled={stopping}
              onClick={() => onStop(true)}
            >
              Stop all
            </button>
          ) : null}
          <button type="submit" className="button-send" disabled={!canSend}>
            {!running ? 'Send' : steer && steerable ? 'Steer' : 'Queue'}
          </button>
        </div>
      </div>
    </form>
  );
}
