import type { PermissionMode, ProtocolEvent } from '@tether/protocol';
import type { CliContext } from '../cli-context.js';
import { InteractionResponder, type ResponderMode } from '../interactions/interaction-responder.js';
import { HumanRenderer } from '../render/human-renderer.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { exitCodeForRun, runTurn } from '../run-turn.js';
import type { TetherBackend } from '../tether-backend.js';

export interface TurnRequest {
  /** Continue this session; otherwise a new one is opened in `cwd`. */
  readonly resume?: string | undefined;
  readonly cwd: string;
  readonly model?: string | undefined;
  readonly permissionMode?: PermissionMode | undefined;
  readonly prompt: string;
  readonly json: boolean;
  /** How prompts are answered; `null` when the provider itself denies them. */
  readonly responder: ResponderMode | null;
}

/**
 * One turn as the `tether` commands run it, in-process or through a daemon: open or resume the
 * session, stream the events to the renderer, answer prompts, print the summary. Ctrl-C stops the
 * run (exit 130); a second Ctrl-C also closes the session.
 */
export async function driveTurn(backend: TetherBackend, request: TurnRequest, context: CliContext, onNothingToStop: () => void): Promise<number> {
  let sessionId: string | undefined;
  let responder: InteractionResponder | null = null;
  const removeInterrupt = context.onInterrupt((count) => {
    if (sessionId === undefined) return onNothingToStop();
    if (count === 1) {
      context.stderr.write('\n■ stopping the run (Ctrl-C again closes the session)…\n');
      backend.interruptRun({ sessionId }).catch(onNothingToStop);
    } else if (count === 2) {
      context.stderr.write('\n■ closing the session…\n');
      backend.closeSession({ sessionId }).catch(() => undefined).finally(onNothingToStop);
    }
  });
  try {
    let afterSeq = 0;
    if (request.resume !== undefined) {
      afterSeq = (await backend.getSession(request.resume)).lastSeq;
      await backend.openSession({ continueSession: request.resume });
      sessionId = request.resume;
    } else {
      const opened = await backend.openSession({
        workspace: { kind: 'directory', path: request.cwd },
        ...(request.model !== undefined ? { model: request.model } : {}),
        ...(request.permissionMode !== undefined ? { permissionMode: request.permissionMode } : {}),
      });
      sessionId = opened.sessionId;
    }
    const mode = request.responder;
    const renderer = request.json
      ? new JsonRenderer(context.stdout)
      : new HumanRenderer(context.stdout, context.stderr, { promptsShownElsewhere: mode?.kind === 'terminal', spinner: context.terminal !== undefined });
    responder = mode ? new InteractionResponder({ runtime: backend, sessionId, mode, stderr: context.stderr }) : null;
    const activeResponder = responder;
    const sink = {
      event(event: ProtocolEvent) {
        renderer.event(event);
        if (event.type === 'interaction.requested') activeResponder?.onRequested(event);
      },
    };
    const run = await runTurn(backend, { sessionId, prompt: request.prompt, afterSeq, sink });
    if (renderer instanceof HumanRenderer) renderer.summary(run, sessionId);
    return exitCodeForRun(run);
  } finally {
    removeInterrupt();
    responder?.close();
  }
}
