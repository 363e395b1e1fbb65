import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type CommandInput,
  type CommandMethodName,
  type CommandMethods,
  type CommandOfType,
  type ReceiptOfType,
  type TetherSurface,
  commandMethodNames,
  commandMethods,
  commandTypes,
} from './command-surface.js';
import { Command, type CommandType, type Receipt } from './commands.js';
import { parseCommand } from './parse-command.js';

const sessionId = `ses_${'a'.repeat(32)}`;

/** One valid input per command: a command added to the protocol without one here does not compile. */
const sampleInputs: { readonly [Type in CommandType]: CommandInput<CommandOfType<Type>> } = {
  open_session: { workspace: { kind: 'directory', path: '/repo' } },
  submit_turn: { sessionId, input: [{ type: 'text', text: 'hi' }] },
  interrupt_run: { sessionId },
  cancel_queued_input: { sessionId, inputId: `inp_${'d'.repeat(32)}` },
  close_session: { sessionId },
  respond_interaction: { sessionId, interactionRef: `int_${'b'.repeat(32)}`, answer: { decision: 'deny' } },
  set_permission_mode: { sessionId, mode: 'plan' },
  run_control: { sessionId, name: 'compact' },
  set_model: { sessionId, model: 'sonnet' },
  get_context_usage: { sessionId },
  get_session_cost: { sessionId },
  fork_session: { sessionId },
  rewind_session: { sessionId, toRunId: `run_${'c'.repeat(32)}`, files: true },
};

describe('the command surface', () => {
  it("has one method per command, each answering with that command's receipt", () => {
    // Compile-time: a command without a receipt in the Receipt union would make its method answer never.
    type CommandsWithoutReceipt = {
      [Type in CommandType]: [ReceiptOfType<Type>] extends [never] ? Type : never;
    }[CommandType];
    expectTypeOf<CommandsWithoutReceipt>().toEqualTypeOf<never>();
    expectTypeOf<keyof CommandMethods>().toEqualTypeOf<CommandMethodName>();
    expectTypeOf<TetherSurface['setModel']>().returns.resolves.toEqualTypeOf<ReceiptOfType<'set_model'>>();
    expectTypeOf<Parameters<TetherSurface['runControl']>[0]>().toEqualTypeOf<
      CommandInput<CommandOfType<'run_control'>>
    >();

    expect([...commandTypes].sort()).toEqual(Command.options.map((schema) => schema.shape.type.value).sort());
    expect(new Set(Object.values(commandMethodNames)).size).toBe(commandTypes.length);
  });

  it("sends each method's command with its type and a generated commandId, or the one given", async () => {
    const sent: Command[] = [];
    const methods = commandMethods(async (command) => {
      sent.push(command);
      return { type: command.type, commandId: command.commandId } as Receipt;
    });
    for (const type of commandTypes) {
      const send = methods[commandMethodNames[type]] as (input: CommandInput<Command>) => Promise<Receipt>;
      const generated = await send(sampleInputs[type] as CommandInput<Command>);
      expect(generated.type).toBe(type);
      expect(parseCommand(sent.at(-1))).toEqual({
        ...sampleInputs[type],
        type,
        commandId: expect.stringMatching(/^cmd_[0-9a-f]{32}$/),
      });
      await send({ ...sampleInputs[type], commandId: `mine-${type}` } as CommandInput<Command>);
      expect(sent.at(-1)).toMatchObject({ type, commandId: `mine-${type}` });
    }
    expect(sent).toHaveLength(2 * commandTypes.length);
  });
});
