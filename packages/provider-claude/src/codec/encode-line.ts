/**
 * One JSON value as one stdin line. The CLI exits on any line that is not valid JSON, so only
 * values JSON.stringify can represent are written (it escapes newlines inside strings).
 */
export function encodeLine(value: object): string {
  const text = JSON.stringify(value);
  if (typeof text !== 'string' || !text.startsWith('{')) {
    throw new TypeError('Only JSON objects can be written to the claude CLI');
  }
  return `${text}\n`;
}
