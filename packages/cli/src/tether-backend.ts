/**
 * What the commands need from Tether, whether it runs in this process (the runtime) or in a daemon
 * (the client): the protocol's one surface, which both implement.
 */
export type { TetherSurface as TetherBackend } from '@tether/protocol';
