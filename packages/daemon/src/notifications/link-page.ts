import type { LinkGrant } from './one-time-links.js';

const htmlEscapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => htmlEscapes[character] as string);
}

/** A page with no script and no style (the daemon's CSP allows neither inline), readable on any phone. */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)} · Tether</title>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export const choiceWording = {
  approve: { title: 'Approve once', button: 'Approve once', done: 'Approved once. The agent continues.' },
  deny: { title: 'Deny', button: 'Deny', done: 'Denied. The agent was told no.' },
} as const;

/**
 * What GET shows: what the link would answer, and a button that POSTs. A GET never answers, so a
 * chat app's link preview (which fetches every URL it sees) cannot approve anything.
 */
export function confirmationPage(grant: LinkGrant): string {
  const wording = choiceWording[grant.choice];
  // Judged by what the call would do: the description is the model's own words, and nothing checks them.
  const action =
    grant.action === null
      ? ''
      : `<p>What it would do (the tool's input):</p>\n<pre><code>${escapeHtml(grant.action)}</code></pre>\n`;
  const summary =
    grant.summary === null
      ? ''
      : `<p>How the agent describes it (its own words, not checked): ${escapeHtml(grant.summary)}</p>\n`;
  return page(
    `${wording.title}: ${grant.tool}`,
    `<p>The agent asks to use <strong>${escapeHtml(grant.tool)}</strong> (session <code>${escapeHtml(grant.sessionId)}</code>).</p>
${action}${summary}<form method="post">
<button type="submit">${escapeHtml(wording.button)}</button>
</form>
<p>This link works once, until ${escapeHtml(new Date(grant.expiresAt).toISOString())}.</p>`,
  );
}

export function answeredPage(grant: LinkGrant, delivered: boolean): string {
  return delivered
    ? page(choiceWording[grant.choice].title, `<p>${escapeHtml(choiceWording[grant.choice].done)}</p>`)
    : page(
        'Not delivered',
        '<p>The answer was accepted but could not reach the agent; its run has most likely ended.</p>',
      );
}

export function refusalPage(title: string, message: string): string {
  return page(title, `<p>${escapeHtml(message)}</p>`);
}
