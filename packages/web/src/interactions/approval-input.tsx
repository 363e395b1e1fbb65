import type { ApprovalRequest } from '@tether/protocol';
import { MarkdownText } from '../markdown/markdown-text.js';
import { shownInput } from './shown-input.js';

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
        <MarkdownText text={shownInput(request.plan, { markdown: true })} />
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
      {description !== null && command !== null ? (
        <p className="approval-description">{shownInput(description)}</p>
      ) : null}
      {command !== null ? (
        <section aria-label="Command">
          <pre className="approval-command">{shownInput(command)}</pre>
        </section>
      ) : null}
      {filePath !== null ? (
        <p className="approval-path">
          <span className="muted">Path </span>
          <code>{shownInput(filePath)}</code>
        </p>
      ) : null}
      {url !== null ? (
        <p className="approval-path">
          <span className="muted">URL </span>
          <code>{shownInput(url)}</code>
        </p>
      ) : null}
      {oldString !== null && newString !== null ? (
        <DiffView removed={shownInput(oldString)} added={shownInput(newString)} />
      ) : null}
      {content !== null && oldString === null ? <DiffView removed="" added={shownInput(content)} /> : null}
      {!known ? (
        <section aria-label="Tool input">
          <pre className="approval-json">{shownInput(JSON.stringify(input, null, 2))}</pre>
        </section>
      ) : null}
    </div>
  );
}
