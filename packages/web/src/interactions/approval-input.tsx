import { type ApprovalRequest, writeOutBidirectionalControls } from '@tether/protocol';
import { MarkdownText } from '../markdown/markdown-text.js';

// Tool input is model-authored: shown as text, bounded so a huge input cannot stall the page, with its
// bidirectional controls written out so it reads in the order it runs.
const maxShown = 20_000;

function bounded(text: string): string {
  const shown = writeOutBidirectionalControls(text);
  return shown.length > maxShown
    ? `${shown.slice(0, maxShown)}\n… (${(shown.length - maxShown).toLocaleString('en')} more characters)`
    : shown;
}

function stringField(input: Record<string, unknown>, name: string): string | null {
  const value = input[name];
  return typeof value === 'string' ? value : null;
}

/** "-" lines for what goes, "+" lines for what comes: enough to judge an edit. */
function DiffView({ removed, added }: { readonly removed: string; readonly added: string }) {
  const lines = [
    ...(removed === '' ? [] : removed.split('\n').map((line) => ({ sign: '-', line }))),
    ...added.split('\n').map((line) => ({ sign: '+', line })),
  ];
  return (
    <section aria-label="Proposed change">
      <pre className="diff">
        {lines.map((entry, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one diff never move, so a position names one line.
          <span key={index} className={entry.sign === '-' ? 'diff-removed' : 'diff-added'}>
            {`${entry.sign} ${entry.line}\n`}
          </span>
        ))}
      </pre>
    </section>
  );
}

/** What the tool would do: the command, the path and the change, or the raw input as JSON. */
export function ApprovalInput({ request }: { readonly request: ApprovalRequest }) {
  const input = request.input;
  if (request.plan !== undefined) {
    return (
      <section className="approval-plan" aria-label="Plan">
        <MarkdownText text={bounded(request.plan)} />
      </section>
    );
  }
  if (input === null) return <p className="muted">The daemon is configured not to show tool input.</p>;
  const command = stringField(input, 'command');
  const filePath = stringField(input, 'file_path') ?? stringField(input, 'notebook_path') ?? stringField(input, 'path');
  const oldString = stringField(input, 'old_string');
  const newString = stringField(input, 'new_string');
  const content = stringField(input, 'content');
  const url = stringField(input, 'url');
  const description = stringField(input, 'description');
  const known = command !== null || filePath !== null || url !== null;
  return (
    <div className="approval-input">
      {description !== null && command !== null ? <p className="approval-description">{bounded(description)}</p> : null}
      {command !== null ? (
        <section aria-label="Command">
          <pre className="approval-command">{bounded(command)}</pre>
        </section>
      ) : null}
      {filePath !== null ? (
        <p className="approval-path">
          <span className="muted">Path </span>
          <code>{bounded(filePath)}</code>
        </p>
      ) : null}
      {url !== null ? (
        <p className="approval-path">
          <span className="muted">URL </span>
          <code>{bounded(url)}</code>
        </p>
      ) : null}
      {oldString !== null && newString !== null ? (
        <DiffView removed={bounded(oldString)} added={bounded(newString)} />
      ) : null}
      {content !== null && oldString === null ? <DiffView removed="" added={bounded(content)} /> : null}
      {!known ? (
        <section aria-label="Tool input">
          <pre className="approval-json">{bounded(JSON.stringify(input, null, 2))}</pre>
        </section>
      ) : null}
    </div>
  );
}
