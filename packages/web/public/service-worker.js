// The web UI's service worker: shows the daemon's notifications (Web Push, docs/notifications.md)
// while no tab is open. Scope "/": it serves notifications only; it caches nothing and handles no fetch.

const maxTitle = 120;
const maxText = 300;

/** Text from the daemon (a session's title, the agent's summary) is untrusted: notifications show it as text, bounded. */
function bounded(value, limit) {
  const text = typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

function askedText(interaction) {
  if (interaction === undefined || interaction === null) return '';
  if (interaction.kind === 'approval')
    return interaction.summary ? `${interaction.tool}: ${interaction.summary}` : `${interaction.tool} asks for approval`;
  const questions = Array.isArray(interaction.questions) ? interaction.questions : [];
  return questions.map((question) => question.question).join(' / ') || 'The agent asks a question';
}

/** What a notification body becomes on screen: a title, a line of text, actions for an approval's one-time links. */
function presentation(body) {
  const session = bounded(body.session?.title, maxTitle) || 'A session';
  const links = body.links ?? {};
  const actions = [];
  if (typeof links.approve === 'string') actions.push({ action: 'approve', title: 'Approve once…' });
  if (typeof links.deny === 'string') actions.push({ action: 'deny', title: 'Deny…' });
  const byKind = {
    interaction_requested: { title: `Needs you: ${session}`, text: askedText(body.interaction) },
    session_waiting: { title: `Still waiting: ${session}`, text: askedText(body.interaction) },
    run_completed: { title: `Done: ${session}`, text: body.run?.outcome === 'interrupted' ? 'Stopped.' : 'Finished.' },
    run_failed: { title: `Failed: ${session}`, text: `The run failed (${bounded(body.run?.errorCode, 60) || 'error'}).` },
  };
  const shown = byKind[body.kind] ?? { title: 'Tether', text: '' };
  return {
    title: bounded(shown.title, maxTitle),
    options: {
      body: bounded(shown.text, maxText),
      tag: body.interaction?.ref ?? body.id,
      icon: '/favicon.svg',
      requireInteraction: body.kind === 'interaction_requested' || body.kind === 'session_waiting',
      actions,
      data: { sessionId: body.session?.id, links },
    },
  };
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let body;
  try {
    body = event.data ? event.data.json() : null;
  } catch {
    body = null;
  }
  if (body === null || typeof body !== 'object') return;
  const { title, options } = presentation(body);
  event.waitUntil(self.registration.showNotification(title, options));
});

/** The session's tab focused, or another of ours sent there, or a new one. */
async function openSession(data) {
  const sessionPath = typeof data?.sessionId === 'string' ? `/sessions/${encodeURIComponent(data.sessionId)}` : '/';
  const target = new URL(sessionPath, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const same = windows.find((client) => client.url === target);
  if (same) return same.focus();
  const ours = windows.find((client) => new URL(client.url).origin === self.location.origin);
  if (ours === undefined) return self.clients.openWindow(target);
  // navigate() works only on a tab this worker controls: any other gets a new window instead.
  return ours
    .focus()
    .then((focused) => focused.navigate(target))
    .catch(() => self.clients.openWindow(target));
}

self.addEventListener('notificationclick', (event) => {
  const data = event.notification.data ?? {};
  event.notification.close();
  const link = event.action === 'approve' || event.action === 'deny' ? data.links?.[event.action] : undefined;
  // An action opens the link's confirmation page, whose button answers (POST): nothing answers unseen.
  event.waitUntil(typeof link === 'string' ? self.clients.openWindow(link) : openSession(data));
});
