import { AgentError, type ProtocolEvent, type SerializedAgentError, toAgentError } from '@tether/protocol';
import { WebSocket, type RawData } from 'ws';
import { invalidRequest } from '../errors/error-response.js';
import type { DaemonState } from '../daemon-state.js';
import { dispatchCommand, knownCommandType, maxCommandBytes } from '../dispatch-command.js';
import { BoundedOutbox, type OutboxFrame } from '../streaming/bounded-outbox.js';
import type { LiveConnection } from '../streaming/connection-registry.js';
import { checkStartPosition } from '../streaming/start-position.js';
import { feedSession } from '../streaming/session-feed.js';
import { raisePayloadLimit } from './payload-limit.js';
import { webSocketEventFrame } from './websocket-event-frame.js';
import {
  AuthFrame,
  ClientFrame,
  closeCodes,
  malformedFrame,
  subscribeWrongOnlyInPosition,
} from './websocket-frames.js';

export const authTimeoutMs = 5_000;

// Above this many bytes waiting in the socket, the writer waits for it to drain; the rest waits in the outbox.
const socketHighWaterBytes = 1024 * 1024;

function invalidFrame(message: string): SerializedAgentError {
  return invalidRequest(message, 'invalid_frame').toObject();
}

/** The id of a frame that failed validation, if it carried a usable one, so the error can be matched. */
function frameIdOf(value: unknown): string | null {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id.length > 0 && id.length <= 200 ? id : null;
}

/**
 * One /v1/ws connection: auth first, then commands and any number of session subscriptions. Every
 * frame to the client goes through one bounded outbox, so replies and events keep their order and a
 * client that stops reading is closed with 4408 instead of growing the daemon's memory.
 */
export class WebSocketConnection implements LiveConnection {
  private readonly socket: WebSocket;
  private readonly state: DaemonState;
  private readonly outbox: BoundedOutbox;
  private readonly subscriptions = new Map<string, AbortController>();
  /** The subscribe and unsubscribe frames not yet applied, in the order they came (inOrder). */
  private subscriptionChanges: Promise<void> = Promise.resolve();
  private authenticated = false;
  private closing = false;
  private cleanedUp = false;
  private alive = true;
  /** Bytes of frames handed to the socket, and how many of them had left it at the last ping. */
  private sentBytes = 0;
  private deliveredAtPing = 0;
  private readonly authTimer: NodeJS.Timeout;
  private readonly pingTimer: NodeJS.Timeout;
  private readonly closed: Promise<void>;
  private readonly onClosed: () => void;
  private readonly onAuthenticated: () => void;

  /** `socket` comes with the small pre-auth frame limit; a valid auth frame raises it to the command limit. */
  constructor(socket: WebSocket, state: DaemonState, callbacks: { onAuthenticated: () => void; onClosed: () => void }) {
    this.socket = socket;
    this.state = state;
    this.onClosed = callbacks.onClosed;
    this.onAuthenticated = callbacks.onAuthenticated;
    this.outbox = new BoundedOutbox({
      maxFrames: state.subscriberLimits.maxFrames,
      maxBytes: state.subscriberLimits.maxBytes,
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    this.authTimer = setTimeout(() => this.refuse('auth frame expected'), authTimeoutMs);
    this.authTimer.unref();
    this.pingTimer = setInterval(() => this.ping(), state.pingIntervalMs);
    this.pingTimer.unref();
    socket.on('message', (data, isBinary) => void this.receive(data, isBinary));
    socket.on('pong', () => {
      this.alive = true;
    });
    socket.on('error', () => this.cleanUp());
    socket.on('close', () => this.cleanUp());
    void this.writeLoop();
  }

  revoke(): void {
    this.close(closeCodes.unauthorized, 'token rotated');
  }

  async shutdown(): Promise<void> {
    this.stopSubscriptions();
    // Let what is queued (the last events of interrupted runs) reach the client, then say goodbye.
    this.outbox.end();
    await this.outbox.waitUntilEmpty();
    this.close(closeCodes.goingAway, 'daemon shutting down');
    await this.closed;
  }

  forgetSession(sessionId: string): void {
    const subscription = this.subscriptions.get(sessionId);
    if (!subscription) return;
    this.endSubscription(sessionId);
    this.send({ type: 'unsubscribed', id: null, sessionId });
  }

  private ping(): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    // A peer that did not answer the last ping is gone (a dead network path never sends a FIN)...
    // unless it is still taking what was sent: a slow reader's ping waits behind megabytes of events.
    const delivered = this.sentBytes - this.socket.bufferedAmount;
    const reading = delivered > this.deliveredAtPing;
    this.deliveredAtPing = delivered;
    if (!this.alive && !reading) {
      this.state.logger.info({ route: '/v1/ws' }, 'websocket closed by the daemon: no answer to a ping, nothing read');
      this.socket.terminate();
      return;
    }
    this.alive = false;
    this.socket.ping();
  }

  private async receive(data: RawData, isBinary: boolean): Promise<void> {
    if (this.closing) return;
    let value: unknown;
    try {
      if (isBinary) throw new Error('binary');
      value = JSON.parse(data.toString());
    } catch {
      if (!this.authenticated) return this.refuse('auth frame expected');
      this.send({
        type: 'error',
        id: null,
        error: invalidFrame(
          'Frames are JSON text, e.g. {"type":"subscribe","id":"c1","sessionId":"ses_…","afterSeq":0}.',
        ),
      });
      return;
    }
    if (!this.authenticated) return this.authenticate(value);
    const parsed = ClientFrame.safeParse(value);
    if (!parsed.success) {
      const subscribe = subscribeWrongOnlyInPosition(value, parsed.error.issues);
      if (subscribe && 'request' in subscribe) {
        const { id, sessionId, afterSeq } = subscribe.request;
        return this.inOrder(() => this.subscribe(id, sessionId, afterSeq));
      }
      if (subscribe) {
        // Answered after the subscribes sent before it, as its own refusal would be.
        const { refusal } = subscribe;
        return this.inOrder(() => void this.send({ type: 'error', id: frameIdOf(value), error: refusal }));
      }
      this.send({ type: 'error', id: frameIdOf(value), error: malformedFrame(value, parsed.error.issues) });
      return;
    }
    const frame = parsed.data;
    switch (frame.type) {
      case 'subscribe':
        return this.inOrder(() => this.subscribe(frame.id, frame.sessionId, frame.afterSeq ?? 0));
      case 'unsubscribe':
        return this.inOrder(() => {
          this.endSubscription(frame.sessionId);
          this.send({ type: 'unsubscribed', id: frame.id, sessionId: frame.sessionId });
        });
      case 'command':
        return this.command(frame.id, frame.command);
    }
  }

  private authenticate(value: unknown): void {
    const frame = AuthFrame.safeParse(value);
    if (!frame.success || !this.state.tokens.verify(frame.data.token)) return this.refuse('unauthorized');
    clearTimeout(this.authTimer);
    if (!raisePayloadLimit(this.socket, maxCommandBytes)) {
      this.state.logger.error(
        { route: '/v1/ws' },
        'cannot raise the WebSocket frame limit after auth (ws changed its receiver): closing',
      );
      return this.close(1011, 'internal error');
    }
    this.authenticated = true;
    this.onAuthenticated();
    this.send({ type: 'ready' });
  }

  /**
   * Subscribes and unsubscribes take effect, and are answered, in the order they were sent: a
   * subscribe looks its session up before it registers, and an unsubscribe sent right behind it
   * would otherwise be answered first and end nothing, leaving the subscription live.
   */
  private inOrder(change: () => Promise<void> | void): Promise<void> {
    const next = this.subscriptionChanges.then(change);
    this.subscriptionChanges = next.catch(() => undefined);
    return next;
  }

  private async subscribe(id: string, sessionId: string, afterSeq: number): Promise<void> {
    try {
      await checkStartPosition(this.state.runtime, sessionId, afterSeq);
    } catch (error) {
      this.send({ type: 'error', id, error: toAgentError(error).toObject() });
      return;
    }
    if (this.closing) return;
    // A second subscribe to the same session restarts it from the new position.
    this.endSubscription(sessionId);
    const controller = new AbortController();
    this.subscriptions.set(sessionId, controller);
    this.state.metrics.subscriberOpened();
    if (!this.send({ type: 'subscribed', id, sessionId })) return;
    // One frame per event, shared by every socket subscribed to the session (websocket-event-frame.ts).
    const sink = {
      deliver: (event: ProtocolEvent) => this.sendFrame(webSocketEventFrame(event)),
      // The subscription's signal: an unsubscribe or a new subscribe while this frame waits for room drops it.
      deliverWhenRoom: async (event: ProtocolEvent) =>
        !this.closing && (await this.outbox.pushWhenRoom(webSocketEventFrame(event), controller.signal)),
    };
    feedSession(this.state.runtime, sessionId, afterSeq, sink, controller.signal).catch((error: unknown) => {
      // The session went away (deleted), or its events could not be read (a store failure, said with
      // its error): tell the client this subscription is over.
      if (this.subscriptions.get(sessionId) !== controller) return;
      this.endSubscription(sessionId);
      const gone = AgentError.isInstance(error) && error.code === 'session_not_found';
      this.send({
        type: 'unsubscribed',
        id: null,
        sessionId,
        ...(gone ? {} : { error: toAgentError(error).toObject() }),
      });
    });
  }

  private async command(id: string, command: unknown): Promise<void> {
    const started = performance.now();
    const fields: Record<string, unknown> = { route: '/v1/ws', frame: 'command' };
    const type = knownCommandType(command);
    if (type) fields['commandType'] = type;
    try {
      const receipt = await dispatchCommand(this.state, command);
      fields['sessionId'] = receipt.sessionId;
      this.send({ type: 'receipt', id, receipt });
    } catch (error) {
      const agentError = toAgentError(error);
      fields['errorCode'] = agentError.code;
      this.send({ type: 'error', id, error: agentError.toObject() });
    }
    fields['durationMs'] = Math.round((performance.now() - started) * 10) / 10;
    this.state.logger.info(fields, 'command');
  }

  /** Queues a frame; false when the connection fell behind past its bound (it is then closed with 4408). */
  private send(frame: object): boolean {
    return this.sendFrame(Buffer.from(JSON.stringify(frame)));
  }

  private sendFrame(frame: OutboxFrame): boolean {
    if (this.closing || this.outbox.isEnded) return false;
    if (this.outbox.push(frame)) return true;
    this.close(closeCodes.tooSlow, 'too slow; reconnect from your last seq');
    return false;
  }

  private async writeLoop(): Promise<void> {
    for (;;) {
      await this.outbox.waitForFrames();
      const frame = this.outbox.shift();
      if (frame === undefined || this.socket.readyState !== WebSocket.OPEN) return;
      // Frames are UTF-8 JSON held as bytes: sent as text messages all the same.
      this.sentBytes += frame.length;
      if (this.socket.bufferedAmount < socketHighWaterBytes) {
        this.socket.send(frame, { binary: false });
      } else {
        await new Promise<void>((resolve) => this.socket.send(frame, { binary: false }, () => resolve()));
      }
    }
  }

  private endSubscription(sessionId: string): void {
    const controller = this.subscriptions.get(sessionId);
    if (!controller) return;
    controller.abort();
    this.subscriptions.delete(sessionId);
    this.state.metrics.subscriberClosed();
  }

  private stopSubscriptions(): void {
    for (const sessionId of [...this.subscriptions.keys()]) this.endSubscription(sessionId);
  }

  /**
   * Closes a socket that did not show the token (4401). Anyone who can reach the port can open
   * such sockets as fast as they like: logged rate-limited (refused-request-log.ts), not one line each.
   */
  private refuse(reason: 'auth frame expected' | 'unauthorized'): void {
    if (this.closing) return;
    this.state.refusals.refused(
      'websocket_unauthorized',
      { route: '/v1/ws', reason },
      'websocket closed by the daemon',
    );
    this.closeSocket(closeCodes.unauthorized, reason);
  }

  private close(code: number, reason: string): void {
    if (this.closing) return;
    this.state.logger.info(
      { route: '/v1/ws', closeCode: code, reason, subscriptions: this.subscriptions.size },
      'websocket closed by the daemon',
    );
    this.closeSocket(code, reason);
  }

  private closeSocket(code: number, reason: string): void {
    this.closing = true;
    this.stopSubscriptions();
    this.outbox.end({ discard: true });
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING)
      this.socket.close(code, reason);
    this.cleanUp();
  }

  private cleanUp(): void {
    if (this.cleanedUp) return;
    this.cleanedUp = true;
    clearTimeout(this.authTimer);
    clearInterval(this.pingTimer);
    this.stopSubscriptions();
    this.outbox.end({ discard: true });
    if (!this.closing) this.closing = true;
    this.onClosed();
  }
}
