/**
 * A minimal ACP client over an agent's stdio (newline-delimited JSON-RPC, as ACP frames it), and how
 * the reference adapter is started. Shared by the ACP scenario (acp-comparison.mjs, which puts it
 * beside `tether acp`) and the peers scenario's adapter leg (peer-acp-leg.mjs).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export const zedPackage = '@zed-industries/claude-agent-acp';

/**
 * The reference adapter's argv (run with node) and environment: `CLAUDE_CODE_EXECUTABLE` is its own
 * override of the claude binary (dist/acp-agent.js passes it on as the Agent SDK's
 * pathToClaudeCodeExecutable); the adapter hands its whole environment to the claude child.
 */
export function claudeAgentAcpLaunch({ claudePath, environment }) {
  return {
    // Spelled out (not built from zedPackage) so the dependency check sees what is used.
    argv: [fileURLToPath(import.meta.resolve('@zed-industries/claude-agent-acp/dist/index.js'))],
    env: { ...environment, CLAUDE_CODE_EXECUTABLE: claudePath },
  };
}

/**
 * Connects to an agent process's stdio. `onUpdate(params, at)` gets every session/update notification
 * with the time it was read; requests resolve with { result, at } (at: when the answer was read).
 */
export function connectAcpAgent(child, { onUpdate }) {
  let nextId = 1;
  const waiting = new Map();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    if (message.method === 'session/update') onUpdate(message.params, performance.now());
    else if (message.method !== undefined && message.id !== undefined) {
      // A permission request (none is expected for a text answer): allow, so a turn never hangs.
      const option = message.params?.options?.find((candidate) => candidate.kind === 'allow_once');
      const result =
        message.method === 'session/request_permission'
          ? { outcome: option ? { outcome: 'selected', optionId: option.optionId } : { outcome: 'cancelled' } }
          : null;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, result })}\n`);
    } else if (message.id !== undefined && waiting.has(message.id)) {
      const { resolve, reject } = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(`${message.error.message} (${JSON.stringify(message.error.data ?? {})})`));
      else resolve({ result: message.result, at: performance.now() });
    }
  });
  return {
    request(method, params) {
      const id = nextId++;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
    /** A notification (no answer), e.g. session/cancel. */
    notify(method, params) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
    },
  };
}

/**
 * Starts an agent (node `argv`, `env`, in `cwd`) and connects to it. `during(promise)` rejects when the
 * agent exits first (with the end of its stderr); `quit(graceMs)` closes its stdin and resolves with
 * { exit, ms } once it exited (killed after graceMs); `kill()` ends it if it still runs.
 */
export function startAcpAgent({ argv, env, cwd, label }, { onUpdate }) {
  const child = spawn(process.execPath, argv, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const closed = new Promise((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  const failed = closed.then(({ code, signal }) => {
    throw new Error(`the ${label} agent exited (${signal ?? code}) during the leg: ${stderr.trim().slice(-800)}`);
  });
  failed.catch(() => {});
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  return {
    child,
    client: connectAcpAgent(child, { onUpdate }),
    during: (promise) => Promise.race([promise, failed]),
    async quit(graceMs) {
      const quitAt = performance.now();
      child.stdin.end();
      const timer = setTimeout(kill, graceMs);
      const exit = await closed;
      clearTimeout(timer);
      return { exit: exit.signal ?? exit.code, ms: exit.at - quitAt };
    },
    kill,
  };
}

/**
 * Follows one prompt at a time: the agent_message_chunk updates between begin() and end(), their
 * text, and when the first one was read (onFirstChunk is called right then). Empty text chunks are
 * left out: the reference adapter sends one for each text block's start, before its first delta.
 */
export function messageChunks() {
  let turn;
  return {
    onUpdate(params, at) {
      if (turn === undefined || params.update.sessionUpdate !== 'agent_message_chunk') return;
      const { content } = params.update;
      if (content?.type === 'text' && content.text === '') return;
      turn.chunks += 1;
      turn.text += content?.type === 'text' ? content.text : '';
      if (turn.firstChunkAt !== undefined) return;
      turn.firstChunkAt = at;
      turn.onFirstChunk?.();
    },
    /** Starts following a prompt sent at `sentAt`. */
    begin(sentAt, { onFirstChunk } = {}) {
      turn = { chunks: 0, text: '', firstChunkAt: undefined, sentAt, onFirstChunk };
    },
    /** Stops following: { chunks, text, firstChunkAt, sentAt }. */
    end() {
      const ended = turn;
      turn = undefined;
      return ended;
    },
  };
}
