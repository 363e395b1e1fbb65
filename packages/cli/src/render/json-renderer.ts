import type { ProtocolEvent } from '@tether/protocol';
import type { Output } from './human-renderer.js';

/** Exactly one neutral event per line on stdout, and nothing else. */
export class JsonRenderer {
  private readonly stdout: Output;

  constructor(stdout: Output) {
    this.stdout = stdout;
  }

  event(event: ProtocolEvent): void {
    this.stdout.write(`${JSON.stringify(event)}\n`);
  }
}
