import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Hono } from 'hono';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import { streamsFull, streamsFullRetrySeconds } from '../errors/error-response.js';
import { directAnswerHeaders } from '../http/direct-answer-headers.js';
import { SseStream } from '../sse/sse-stream.js';
import { streamStartSeq } from '../sse/sse-writer.js';
import { knownQuery } from '../http/known-query.js';
import { checkStartPosition } from '../streaming/start-position.js';

export function registerEventRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  app.get('/v1/sessions/:id/events', async (context) => {
    const sessionId = context.req.param('id');
    const afterSeq = streamStartSeq(context.req.header('last-event-id'), knownQuery(context, ['after']).after);
    // Answer 404 (or a start past the end) now, while a status can still be sent.
    await checkStartPosition(state.runtime, sessionId, afterSeq);
    if (state.connections.full) {
      context.header('Retry-After', String(streamsFullRetrySeconds));
      throw streamsFull(state.connections.limit);
    }
    const response = context.env.outgoing;
    // The client left while the start was checked (a store read): its connection's close has been
    // heard already, and a stream begun now would wait for it for ever, holding a subscriber's place.
    if (response.closed) return RESPONSE_ALREADY_SENT;
    // Written straight to the response, so the middleware's headers are added here.
    response.writeHead(200, {
      ...directAnswerHeaders(context.req.header('origin'), state.policy),
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // Proxies such as nginx would otherwise hold events back.
      'X-Accel-Buffering': 'no',
    });
    // HEAD (a probe, a link checker) gets the headers alone: a stream would never end its response,
    // holding a subscriber and the connection until the client hung up.
    if (context.req.method === 'HEAD') {
      response.end();
      return RESPONSE_ALREADY_SENT;
    }
    response.flushHeaders();
    state.metrics.subscriberOpened();
    let forget = () => {};
    const stream = new SseStream({
      runtime: state.runtime,
      sessionId,
      afterSeq,
      limits: state.subscriberLimits,
      pingIntervalMs: state.pingIntervalMs,
      response,
      onEnd: (reason, stats) => {
        forget();
        state.metrics.subscriberClosed();
        state.logger.info(
          { route: '/v1/sessions/:id/events', sessionId, reason, events: stats.events, lastSeq: stats.lastSeq },
          'event stream ended',
        );
      },
    });
    forget = state.connections.add(stream);
    // The stream writes the response itself; this tells the adapter not to touch it.
    return RESPONSE_ALREADY_SENT;
  });
}
