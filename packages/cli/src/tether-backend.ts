import type {
  CloseSessionCommand,
  CloseSessionReceipt,
  InterruptRunCommand,
  InterruptRunReceipt,
  OpenSessionCommand,
  OpenSessionReceipt,
  ProtocolEvent,
  RespondInteractionCommand,
  RespondInteractionReceipt,
  SessionSnapshot,
  SubmitTurnCommand,
  SubmitTurnReceipt,
} from '@tether/protocol';

type Input<C extends { type: string; commandId: string }> = Omit<C, 'type' | 'commandId'> & { commandId?: string };

/**
 * What the commands need from Tether, whether it runs in this process (the runtime) or in a daemon
 * (the client): both have these methods with these shapes.
 */
export interface TetherBackend {
  openSession(input: Input<OpenSessionCommand>): Promise<OpenSessionReceipt>;
  submitTurn(input: Input<SubmitTurnCommand>): Promise<SubmitTurnReceipt>;
  interruptRun(input: Input<InterruptRunCommand>): Promise<InterruptRunReceipt>;
  closeSession(input: Input<CloseSessionCommand>): Promise<CloseSessionReceipt>;
  respondInteraction(input: Input<RespondInteractionCommand>): Promise<RespondInteractionReceipt>;
  getSession(sessionId: string): Promise<SessionSnapshot>;
  subscribe(sessionId: string, options?: { afterSeq?: number; signal?: AbortSignal }): AsyncIterable<ProtocolEvent>;
}
