import type { Hono } from 'hono';
import { invalidRequest } from '../errors/error-response.js';
import { knownQuery } from '../http/known-query.js';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import { pageSessions, parsePageQuery } from '../sessions/session-page.js';
import { parseDiffMaxBytes, parseDiscardWorkspaceChanges } from '../sessions/session-queries.js';

export function registerSessionRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  app.get('/v1/sessions', async (context) => {
    const query = parsePageQuery(knownQuery(context, ['state', 'limit', 'before']));
    // One more than the page, to know whether a next page exists; the runtime reads no further.
    const sessions = await state.runtime.listSessions({
      limit: query.limit + 1,
      ...(query.state ? { state: query.state } : {}),
      ...(query.before ? { before: query.before } : {}),
    });
    return context.json(pageSessions(sessions, query), 200);
  });

  app.get('/v1/sessions/:id', async (context) => {
    return context.json(await state.runtime.getSession(context.req.param('id')), 200);
  });

  app.get('/v1/sessions/:id/blobs/:sha256', async (context) => {
    const sha256 = context.req.param('sha256');
    if (!/^[0-9a-f]{64}$/.test(sha256))
      throw invalidRequest(
        'A blob is named by the lowercase hex SHA-256 of its bytes (64 characters), as run.started records it.',
        'invalid_sha256',
      );
    const blob = await state.runtime.readBlob(context.req.param('id'), sha256);
    const validators = {
      // Content-addressed: the bytes at this URL never change, so a browser keeps them (privately: it needed the token).
      'Cache-Control': 'private, max-age=31536000, immutable',
      ETag: `"${sha256}"`,
    };
    // Only once the session is known to carry it: a 304 must not tell who asks that another session does.
    if (matchesEntityTag(context.req.header('if-none-match'), validators.ETag))
      return context.body(null, 304, validators);
    // The store's bytes live in an ordinary ArrayBuffer (never a shared one): answered as they are, uncopied.
    return context.body(blob.bytes as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': blob.mediaType,
      'Content-Length': String(blob.bytes.byteLength),
      ...validators,
    });
  });

  app.get('/v1/sessions/:id/diff', async (context) => {
    const maxBytes = parseDiffMaxBytes(knownQuery(context, ['maxBytes']).maxBytes);
    return context.json(await state.runtime.getSessionDiff(context.req.param('id'), { maxBytes }), 200);
  });

  app.delete('/v1/sessions/:id', async (context) => {
    const sessionId = context.req.param('id');
    const discardWorkspaceChanges = parseDiscardWorkspaceChanges(
      knownQuery(context, ['discardWorkspaceChanges']).discardWorkspaceChanges,
    );
    const deleted = await state.runtime.deleteSession(sessionId, { discardWorkspaceChanges });
    // Streams following it would otherwise wait for events that can no longer come.
    state.connections.forgetSession(sessionId);
    return context.json(deleted, 200);
  });
}

/** If-None-Match (RFC 9110 13.1.2): "*", or a list of tags compared weakly (a W/ prefix is ignored). */
function matchesEntityTag(ifNoneMatch: string | undefined, entityTag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === entityTag);
}
