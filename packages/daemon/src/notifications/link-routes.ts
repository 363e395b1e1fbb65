import { AgentError, type InteractionAnswer, type RespondInteractionReceipt, newCommandId } from '@tether/protocol';
import type { Context, Hono } from 'hono';
import type { DaemonState } from '../daemon-state.js';
import { dispatchCommand } from '../dispatch-command.js';
import { describeError } from '../errors/error-response.js';
import type { DaemonEnvironment } from '../http/request-environment.js';
import { wantsHtml } from '../static/static-path.js';
import { answeredPage, confirmationPage, refusalPage } from './link-page.js';
import type { LinkChoice, LinkGrant } from './one-time-links.js';

const answers: Record<LinkChoice, InteractionAnswer> = {
  approve: { decision: 'approve', scope: 'once' },
  deny: { decision: 'deny' },
};

/**
 * Never cached; and `same-origin` instead of the daemon's usual `no-referrer`: under that policy a
 * browser sends the page's form POST with `Origin: null`, which the origin check refuses (403). The
 * referrer (the link, token included) then goes only to this daemon, and the page loads nothing else.
 */
const noStore = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'same-origin' };

function linkUnavailable(): AgentError {
  return new AgentError({
    code: 'link_unavailable',
    message:
      'This link no longer answers anything: it was used already, it expired, or the question was answered or ended another way. Open the session in the web UI to see where it stands.',
  });
}

/** A browser (which asked for HTML) gets a page; anything else (a chat app's action, a script) gets JSON. */
function answersWithPage(context: Context<DaemonEnvironment>): boolean {
  return wantsHtml(context.req.header('accept'));
}

function refuse(context: Context<DaemonEnvironment>, error: unknown) {
  const { status, body, code } = describeError(error);
  context.set('errorCode', code);
  return answersWithPage(context)
    ? context.html(refusalPage('Not answered', body.error.message), status as 410, noStore)
    : context.json(body, status as 410, noStore);
}

async function answer(state: DaemonState, grant: LinkGrant): Promise<RespondInteractionReceipt> {
  // The normal path, as any client's answer: a command with its own id, first answer wins.
  return (await dispatchCommand(state, {
    type: 'respond_interaction',
    commandId: newCommandId(),
    sessionId: grant.sessionId,
    interactionRef: grant.interactionRef,
    answer: answers[grant.choice],
  })) as RespondInteractionReceipt;
}

/**
 * /v1/links/<token>: registered before the token check, since the one-time token is the whole
 * credential, and it grants exactly one answer to one interaction. GET shows what it would do;
 * POST does it (once). Nothing else is reachable this way.
 */
export function registerLinkRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  app.get('/v1/links/:token', (context) => {
    const grant = state.links.peek(context.req.param('token'));
    if (grant === null) return refuse(context, linkUnavailable());
    context.set('sessionId', grant.sessionId);
    return answersWithPage(context)
      ? context.html(confirmationPage(grant), 200, noStore)
      : context.json(
          {
            choice: grant.choice,
            sessionId: grant.sessionId,
            interactionRef: grant.interactionRef,
            tool: grant.tool,
            summary: grant.summary,
            action: grant.action,
            expiresAt: new Date(grant.expiresAt).toISOString(),
            answerWith: 'POST',
          },
          200,
          noStore,
        );
  });
  app.post('/v1/links/:token', async (context) => {
    const grant = state.links.take(context.req.param('token'));
    if (grant === null) return refuse(context, linkUnavailable());
    context.set('sessionId', grant.sessionId);
    context.set('commandType', 'respond_interaction');
    let receipt: RespondInteractionReceipt;
    try {
      receipt = await answer(state, grant);
    } catch (error) {
      return refuse(context, error);
    }
    const delivered = receipt.status === 'settled';
    return answersWithPage(context)
      ? context.html(answeredPage(grant, delivered), delivered ? 200 : 502, noStore)
      : context.json(
          {
            answered: grant.choice,
            sessionId: grant.sessionId,
            interactionRef: grant.interactionRef,
            status: receipt.status,
          },
          delivered ? 200 : 502,
          noStore,
        );
  });
  // Any other method is a wrong method (405 from the app's own answer), not a missing token (401).
  app.all('/v1/links/:token', (context) => context.notFound());
}
