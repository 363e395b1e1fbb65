import { type FormEvent, useRef, useState } from 'react';
import { type InteractionAnswer, type QuestionSetRequest, writeOutBidirectionalControls } from '@tether/protocol';
import { type QuestionDraft, answersFor, emptyDraft, toggleOption } from './question-answers.js';
import { FailureNotice } from '../connection/failure-notice.js';
import { useAnswerSender } from './use-answer-sender.js';
import { useFocusOnArrival } from './use-focus-on-arrival.js';

export interface QuestionCardProps {
  readonly interactionRef: string;
  readonly request: QuestionSetRequest;
  readonly onAnswer: (answer: InteractionAnswer) => Promise<void>;
}

/** The agent's questions, answered all at once: options (one or several) or one's own words, or declined. */
export function QuestionCard({ interactionRef, request, onAnswer }: QuestionCardProps) {
  const [drafts, setDrafts] = useState<readonly QuestionDraft[]>(() => request.questions.map(() => emptyDraft));
  const { sending, failure, send } = useAnswerSender(onAnswer);
  const card = useRef<HTMLFormElement>(null);
  // Tab then goes straight to the first option.
  useFocusOnArrival(card);

  const update = (index: number, change: (draft: QuestionDraft) => QuestionDraft) =>
    setDrafts((previous) => previous.map((draft, at) => (at === index ? change(draft) : draft)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void send({ decision: 'answer', answers: answersFor(request.questions, drafts) });
  };

  return (
    <form
      className="card question-card"
      aria-label="Questions from the agent"
      tabIndex={-1}
      ref={card}
      onSubmit={submit}
    >
      <h3 className="card-title">
        {request.questions.length === 1
          ? 'The agent asks you'
          : `The agent asks you ${request.questions.length} questions`}
      </h3>
      {request.sensitive ? <p className="muted">Marked sensitive: your answers are not stored.</p> : null}
      {request.questions.map((question, index) => {
        const draft = drafts[index] ?? emptyDraft;
        const group = `${interactionRef}-${index}`;
        return (
          <fieldset key={group} className="question">
            <legend>
              {question.header ? (
                <span className="question-header">{writeOutBidirectionalControls(question.header)}</span>
              ) : null}
              <span className="question-text">{writeOutBidirectionalControls(question.question)}</span>
            </legend>
            <p className="muted">{question.multiSelect ? 'Choose any.' : 'Choose one.'}</p>
            {question.options.map((option) => (
              <label key={option.label} className="question-option">
                <input
                  type={question.multiSelect ? 'checkbox' : 'radio'}
                  name={group}
                  value={option.label}
                  checked={draft.selected.includes(option.label)}
                  onChange={(event) =>
                    update(index, (current) => toggleOption(question, current, option.label, event.target.checked))
                  }
                />
                {/* The value sent is the label as the agent wrote it; what is read has its bidirectional controls written out. */}
                <span className="question-option-label">{writeOutBidirectionalControls(option.label)}</span>
                {option.description ? (
                  <span className="question-option-description">
                    {writeOutBidirectionalControls(option.description)}
                  </span>
                ) : null}
              </label>
            ))}
            <input
              type="text"
              className="question-free-text"
              aria-label={`Your own answer to: ${writeOutBidirectionalControls(question.question)}`}
              placeholder="Or answer in your own words"
              maxLength={10_000}
              value={draft.text}
              onChange={(event) => update(index, (current) => ({ ...current, text: event.target.value }))}
              onKeyDown={(event) => {
                // Enter goes on to the next question, as a form of several questions is read: sending the
                // set from here sent the questions not reached yet as skipped. The last one's sends.
                if (event.key !== 'Enter' || event.nativeEvent.isComposing || index === request.questions.length - 1)
                  return;
                event.preventDefault();
                const next = card.current?.querySelectorAll('fieldset.question')[index + 1];
                next?.querySelector<HTMLInputElement>('input')?.focus();
              }}
            />
          </fieldset>
        );
      })}
      <div className="card-actions">
        <button type="submit" className="button-approve" disabled={sending}>
          Send answers
        </button>
        <button type="button" disabled={sending} onClick={() => void send({ decision: 'decline' })}>
          Decline
        </button>
      </div>
      <FailureNotice failure={failure} />
    </form>
  );
}
