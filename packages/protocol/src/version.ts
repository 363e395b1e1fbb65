export const VERSION = '0.1.0';

/** Bumped on any breaking change to commands or events on the wire. */
export const PROTOCOL_VERSION = 1;
