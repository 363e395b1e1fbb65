import { type CommandMethods, commandMethods } from '@tether/protocol';

abstract class Dispatcher {
  abstract dispatch(raw: unknown): Promise<never>;
}

// Generated from the protocol's command table, so every command has its method; installed as
// non-enumerable prototype methods, like written ones, so a subclass can still override one.
for (const [name, method] of Object.entries(
  commandMethods(function (this: Dispatcher, command) {
    return this.dispatch(command);
  }),
)) {
  Object.defineProperty(Dispatcher.prototype, name, { value: method, writable: true, configurable: true });
}

/** The typed command methods: each is dispatch with its type filled in and a commandId generated if none was given. */
export const TypedCommands = Dispatcher as abstract new () => Dispatcher & CommandMethods;
