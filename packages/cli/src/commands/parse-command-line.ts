import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../usage-error.js';

/** A command's arguments, parsed strictly; an unknown or malformed option is a UsageError that ends with `usage`. */
export function parseCommandLine<const Config extends Omit<ParseArgsConfig, 'args' | 'strict'>>(
  argv: readonly string[],
  config: Config,
  usage: string,
) {
  const parse = () => {
    try {
      return parseArgs({ ...config, args: [...argv], strict: true as const });
    } catch (error) {
      throw new UsageError(`${describeParseError(error as Error & { code?: string }, usage)}\n\n${usage}`);
    }
  };
  const parsed = parse();
  refuseEmptyValues(parsed.values, usage);
  return parsed;
}

/**
 * No option takes an empty value: one is nearly always a shell variable that was not set
 * (`--cwd "$DIR"`), and read as given it would mean something else unasked (`--cwd ''` the current
 * directory, `--data-dir ''` the default one).
 */
function refuseEmptyValues(values: Record<string, unknown>, usage: string): void {
  const command = /^usage: (tether [a-z-]+)/.exec(usage)?.[1] ?? 'tether';
  for (const [name, value] of Object.entries(values)) {
    if (value === '' || (Array.isArray(value) && value.includes('')))
      throw new UsageError(
        `--${name} was given an empty value (a shell variable that is not set?): give it a value, or leave it out (${command} --help says what it takes).`,
      );
  }
}

/**
 * Node's words, except for an unknown option: its own hint (`as in '-- "--x"`, a quote unclosed)
 * reads as if the option were meant as an argument; this names the option, where the options are
 * listed, and for a command that takes a prompt, how to give one that starts with '-'.
 */
function describeParseError(error: Error & { code?: string }, usage: string): string {
  const command = /^usage: (tether [a-z-]+)/.exec(usage)?.[1] ?? 'tether';
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // Node's "argument is ambiguous" (a value that starts with '-'), "argument missing", and "does not take an argument".
    const valued = /^Option '(--[a-z-]+)/.exec(error.message)?.[1];
    if (valued !== undefined && /argument is ambiguous/.test(error.message))
      return `${valued} takes a value, and what follows it starts with '-': a value that does is written ${valued}=VALUE (${command} --help says what it takes).`;
    if (valued !== undefined && /argument missing/.test(error.message))
      return `${valued} takes a value, and none was given (${command} --help says what it takes).`;
    if (valued !== undefined && /does not take an argument/.test(error.message))
      return `${valued} takes no value: give it alone, without =… (${command} --help says what it takes).`;
  }
  const option = /^Unknown option '([^']+)'/.exec(error.message)?.[1];
  if (error.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || option === undefined) return error.message;
  const prompt = usage.includes('"prompt"') ? `; a prompt that starts with '-' goes after --: ${command} -- "-…"` : '';
  return `unknown option ${option} (${command} --help lists them${prompt}).`;
}

/** The options of a command line: what comes before `--` (after it, a prompt may say anything). */
export function optionArguments(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf('--');
  return end === -1 ? argv : argv.slice(0, end);
}
