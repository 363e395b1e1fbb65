/**
 * How the raw legs read claude's stdout: split into lines, nothing more (the least a host must do,
 * so the baseline stays cheap). One copy for the raw loop and the raw lifecycle process.
 */
export function onLines(stream, onLine) {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const text = partial + chunk;
    let from = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', from)) {
      const line = text.slice(from, newline);
      from = newline + 1;
      if (line.length > 0) onLine(line);
    }
    partial = text.slice(from);
  });
}
