import { AgentError } from '@tether/protocol';
import { isLoopbackHost } from '../auth/loopback-host.js';

function refused(message: string, reason: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason } });
}

/**
 * A receiver's URL, checked: https anywhere, plain http only to this machine unless allowed, since
 * the body and the one-time links in it would otherwise cross the network readable by anyone on the
 * path. `where` names the URL in messages without repeating it (its path may hold a webhook key).
 */
export function checkReceiverUrl(value: string, where: string, allowPlainHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refused(`${where} is not a URL; give an https:// URL (or http:// to 127.0.0.1).`, 'notification_url_invalid');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw refused(`${where} must be an https:// or http:// URL, not ${url.protocol}.`, 'notification_url_invalid');
  if (url.username !== '' || url.password !== '')
    throw refused(
      `${where} holds a user or password; put the receiver's key in its path or query, or use a per-receiver secret.`,
      'notification_url_invalid',
    );
  if (url.protocol === 'http:' && !allowPlainHttp && !isLoopbackHost(url.hostname))
    throw refused(
      `${where} is plain http to ${url.hostname}, which is not this machine: notifications and their one-time links would cross the network unencrypted. Use https://, or allow it explicitly with --notify-allow-http (config file: "allowPlainHttp": true).`,
      'notification_url_insecure',
    );
  return url;
}

/** The receiver's label in metrics and logs: its position and host, never its path or query. */
export function receiverLabel(url: URL, position: number): string {
  return `${position}-${url.host}`;
}
