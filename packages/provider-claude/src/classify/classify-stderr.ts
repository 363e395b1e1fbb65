/** Known stderr lines, reduced to a token: the raw text is never stored or shown. */
const stderrPatterns: readonly (readonly [string, RegExp])[] = [
  ['bypass_root', /cannot be used with root\/sudo privileges/],
  ['no_conversation', /No conversation found with session ID/],
  ['no_message', /No message found with message\.uuid of/],
  ['session_id_in_use', /Session ID \S+ is already in use/],
  ['unknown_option', /error: unknown option/i],
  ['invalid_input_line', /Error parsing streaming input line/],
  ['requires_verbose', /requires --verbose/],
  ['out_of_memory', /heap out of memory|Out of memory/i],
  ['mcp_config_invalid', /Invalid MCP configuration/],
  ['settings_file_missing', /Settings file not found/],
];

export function classifyStderr(stderrTail: string): string | undefined {
  for (const [token, pattern] of stderrPatterns) {
    if (pattern.test(stderrTail)) return token;
  }
  return undefined;
}
