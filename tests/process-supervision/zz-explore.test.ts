import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { createClaudeTestEnvironment, processesWithEnvironment, runEvents } from '@tether/testkit';
import { it } from 'vitest';

function describeTree(home: string): string[] {
  const lines: string[] = [];
  for (const pid of processesWithEnvironment('HOME', home)) {
    try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').slice(0, 60);
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter((e) => e.startsWith('PROBE'));
    const fds = readdirSync(`/proc/${pid}/fd`).map((fd) => `${fd}:${readlinkSync(`/proc/${pid}/fd/${fd}`)}`).join(' ');
    lines.push(`pid=${pid} state=${fields[0]} ppid=${fields[1]} pgid=${fields[2]} sid=${fields[3]} env=${env} cmd=${cmd}\n   fds=${fds}`);
    } catch (e) { lines.push(`pid=${pid} gone`); }
  }
  return lines;
}

const commands = [
  'tail -f /dev/null &',
  'nohup sleep 300 > /dev/null 2>&1 & setsid sleep 301 > /dev/null 2>&1 & tail -f /dev/null > /dev/null 2>&1 &',
  'env -u PROBE_MARK tail -f /dev/null > /dev/null 2>&1 &',
  'FG:tail -f /dev/null',
];

for (const entry of commands) {
  it(`explore: ${entry}`, async () => {
    const command = entry.replace(/^FG:/, '');
    const environment = await createClaudeTestEnvironment({ sandbox: true });
    try {
      environment.api.enqueue(toolUseReply('Bash', { command, description: 'background' }), textReply('Started.'));
      const runtime = await environment.runtime({ provider: { environment: { ...environment.environment, PROBE_MARK: 'abc' } } });
      const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace }, permissionMode: 'bypass' });
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go.' }] });
      const done = runEvents(runtime, sessionId, runId);
      if (entry.startsWith('FG:')) {
        await environment.api.waitForRequests(1, { kind: 'turn' });
        await new Promise((r) => setTimeout(r, 3000));
        console.log(command, 'DURING\n' + describeTree(environment.home).join('\n'));
        const claude = processesWithEnvironment('HOME', environment.home).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('claude'));
        process.kill(claude!, 'SIGKILL');
        const events = await done;
        console.log(JSON.stringify(events.at(-1)));
        console.log(command, 'AFTER KILL\n' + describeTree(environment.home).join('\n'));
      } else {
        const events = await done;
        const req = environment.api.requests.filter((r) => r.kind === 'turn')[1];
        console.log('TOOLRESULT', JSON.stringify(req?.view?.toolResults));
        console.log(command, 'AFTER TURN\n' + describeTree(environment.home).join('\n'));
        await runtime.closeSession({ sessionId } as never);
      }
      await new Promise((r) => setTimeout(r, 500));
      console.log(command, 'AFTER CLOSE\n' + describeTree(environment.home).join('\n'));
    } finally {
      for (const pid of processesWithEnvironment('HOME', environment.home)) process.kill(pid, 'SIGKILL');
      await environment.cleanup();
    }
  });
}
