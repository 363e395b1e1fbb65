/**
 * A bench child process (fake API, daemon) ends when the bench does: on stdin EOF (the bench exited,
 * even by SIGKILL), SIGTERM, or a closed IPC channel. `close` runs once; the process then exits 0.
 */
export function exitWithParent(close) {
  let closing = false;
  const stop = async () => {
    if (closing) return;
    closing = true;
    try {
      await close();
    } catch (error) {
      process.stderr.write(`close failed: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    process.exit(0);
  };
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
}
