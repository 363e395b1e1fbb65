import type { InputDelivery, ProtocolEvent } from '@tether/protocol';
import { type ShutdownSignal, signalExitCode } from '@tether/runtime';
import type { CliContext } from '../cli-context.js';
import { InteractionResponder } from '../interactions/interaction-responder.js';
import { HumanRenderer, type Output } from '../render/human-renderer.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { UsageError } from '../usage-error.js';
import { checkPromptSource, checkPromptText, promptFromStdin, readPrompt } from './prompt-argument.js';
import { connectToDaemon, oneSessionId, parseDaemonCommand } from './daemon-options.js';
import { daemonTurnStopper } from './daemon-turn-stopper.js';
import { driveTurn, signalDeadlineMs } from './turn-driver.js';
import { responderMode, warnIfNobodyToAsk } from './run-command.js';
import { attachmentHelp, attachmentOptions, parseAttachments } from './attachment-options.js';

const common = '[--json] [--approve ask|allow-once|deny] [--answers FILE|-] [--server URL] [--data-dir DIR]';
export const attachUsage = `usage: tether attach SESSION ${common}`;
export const sendUsage = `usage: tether send SESSION [--queue|--steer] [--image PATH]... [--file PATH]... ${common} "prompt"
  "prompt" is the turn's text; - reads it from stdin to its end instead (then it does not show in ps).
  While a run is active: --queue runs the prompt as the next run (in order, after what is already
  queued), --steer hands it into the running turn at the agent's next opportunity; without either
  the send is refused (run_active). Ctrl-C withdraws a follow-up that has not started yet. While
  follow-ups are held by the plan limit (no run active), a send runs at once, ahead of them (said).
${attachmentHelp}`;

const promptOptions = { approve: { type: 'string' as const }, answers: { type: 'string' as const } };

function approveOption(value: unknown): 'ask' | 'allow-once' | 'deny' {
  if (value === undefined) return 'ask';
  if (value === 'ask' || value === 'allow-once' || value === 'deny') return value;
  throw new UsageError(`--approve takes ask, allow-once or deny, not "${String(value)}".`);
}

/**
 * `tether attach SESSION`: follows the session live and answers its prompts (at the terminal, from
 * --answers, or as --approve says; with none of them, only shows them), until Ctrl-C (exit 0),
 * SIGTERM (143) or SIGHUP (129).
 */
export async function attachCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, attachUsage, promptOptions);
  const { values, positionals } = command;
  const sessionId = oneSessionId(positionals, attachUsage);
  const json = values.json === true;
  const mode = responderMode(
    {
      approve: approveOption(values.approve),
      answers: typeof values.answers === 'string' ? values.answers : undefined,
      json,
    },
    context,
    // Following a session answers for nobody by default: a log or a pipe must not deny another
    // client's prompts (they stay waiting, as without it).
    'watch',
  );
  // Only once the arguments are sound: a mistake in them is told whether or not a daemon runs.
  const client = await connectToDaemon(command, context);
  const snapshot = await client.getSession(sessionId);
  const held = (output: Output) => (mode.kind === 'terminal' ? mode.prompter.heldWhilePrompting(output) : output);
  const renderer = json
    ? new JsonRenderer(context.stdout)
    : new HumanRenderer(held(context.stdout), held(context.stderr), {
        promptsShownElsewhere: mode.kind === 'terminal',
        showRuns: true,
      });
  const responder = new InteractionResponder({ runtime: client, sessionId, mode, stderr: context.stderr });
  const controller = new AbortController();
  // Detaching leaves the session as it is: the daemon keeps running it.
  const detached: { by: ShutdownSignal | null } = { by: null };
  const removeInterrupt = context.onInterrupt((_count, signal) => {
    detached.by ??= signal;
    if (signal !== 'SIGINT') context.exitAfter(signalDeadlineMs, signalExitCode(signal));
    controller.abort();
  });
  if (!json) context.stderr.write(`attached to ${sessionId} (${snapshot.state}); Ctrl-C detaches\n`);
  if (mode.kind === 'watch') {
    context.stderr.write(
      'tether attach: prompts are shown, not answered here (no terminal to ask at); answer them elsewhere, or give --answers or --approve.\n',
    );
  }
  try {
    // Prompts already waiting are answered too (a reconnecting host must see them): replay from the
    // start when there are some, showing only what is new.
    const pending = new Set(snapshot.pendingInteractions.map((interaction) => interaction.interactionRef));
    const afterSeq = pending.size > 0 ? 0 : snapshot.lastSeq;
    for await (const event of client.subscribe(sessionId, { afterSeq, signal: controller.signal })) {
      const isNew = event.seq > snapshot.lastSeq;
      const waiting = event.type === 'interaction.requested' && pending.has(event.interactionRef);
      // A prompt that was already waiting is shown as well: whoever answers (a person, or a host
      // reading --json and writing --answers) has to see it to answer it.
      if (isNew || waiting) renderer.event(event);
      if (event.type === 'interaction.requested' && (isNew || waiting)) {
        responder.onRequested(event as Extract<ProtocolEvent, { type: 'interaction.requested' }>);
      }
      // Answered elsewhere (another terminal, the web UI, a link), withdrawn or cancelled: not asked here any more.
      if (
        event.type === 'interaction.settled' ||
        event.type === 'interaction.withdrawn' ||
        event.type === 'interaction.cancelled'
      )
        responder.onOver(event.interactionRef);
    }
  } finally {
    removeInterrupt();
    responder.close();
  }
  return detached.by === null || detached.by === 'SIGINT' ? 0 : signalExitCode(detached.by);
}

/** `tether send SESSION "prompt"`: one turn in a daemon's session, followed until it completes. */
export async function sendCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, sendUsage, {
    ...promptOptions,
    ...attachmentOptions,
    queue: { type: 'boolean', default: false },
    steer: { type: 'boolean', default: false },
  });
  const { values, positionals } = command;
  if (values.queue === true && values.steer === true) throw new UsageError(`Give --queue or --steer, not both.`);
  const delivery: InputDelivery | undefined =
    values.queue === true ? 'after_turn' : values.steer === true ? 'steer' : undefined;
  if (positionals.length !== 2) throw new UsageError(`Give a session id and one prompt.\n\n${sendUsage}`);
  const [sessionId, argument] = positionals as [string, string];
  oneSessionId([sessionId], sendUsage);
  const example = `tether send ${sessionId} "now add a test"`;
  const answers = typeof values.answers === 'string' ? values.answers : undefined;
  if (argument !== promptFromStdin) checkPromptText(argument, example);
  checkPromptSource(argument, answers);
  const json = values.json === true;
  const approve = approveOption(values.approve);
  const mode = responderMode({ approve, answers, json, prompt: argument }, context);
  const prompt = await readPrompt(argument, context, example);
  // Only once the arguments are sound: a mistake in them is told whether or not a daemon runs.
  const client = await connectToDaemon(command, context);
  return driveTurn(
    client,
    {
      resume: sessionId,
      cwd: context.cwd,
      prompt,
      attachments: parseAttachments(values, context),
      json,
      delivery,
      responder: mode,
      // As the turn goes out: a refusal of it (an unknown session) comes alone.
      beforeSending: () =>
        warnIfNobodyToAsk(mode, { approve, json, prompt: argument, steer: delivery === 'steer' }, context),
    },
    context,
    daemonTurnStopper(client),
  );
}
