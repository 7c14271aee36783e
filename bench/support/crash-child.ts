import { spawn } from 'node:child_process';
import { isAck, parseWriterLine, type Ack } from './crash-acks.js';

/**
 * When the child is killed with SIGKILL: so long after its first ack of kind `armOn` (the
 * workload's own writes, not the set-up before them), or so long after it started.
 */
export type KillAt =
  { afterFirstAckMs: number; armOn: Ack['kind'] } | { afterStartMs: number } | null;

/** What one child run left behind. */
export interface ChildRun {
  /** Every acknowledgement read from the child's stdout, in order. */
  acks: Ack[];
  /** The operation the child had begun and not acknowledged when it died, if it said. */
  inFlight: string | null;
  /** The kill was sent while the child was still running. */
  killed: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The whole of stdout (the CLI's JSON document, for `init`). */
  stdout: string;
  stderr: string;
  /** The child's own `{"kind":"error"}` line, or a timeout, when it stopped by itself. */
  error: string | null;
  ms: number;
}

/**
 * Runs `node <args>` and, per `killAt`, kills it with SIGKILL. The kill is timed from the first
 * ack of the workload's kind (so it lands among those writes, not in start-up) or from the start
 * (for `init`). A child still running after `timeoutMs` with no kill sent is killed and
 * reported. Resolves once stdout has closed, so every line the child wrote before it died has
 * been read.
 */
export function runChild(
  args: readonly string[],
  killAt: KillAt,
  timeoutMs: number,
): Promise<ChildRun> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acks: Ack[] = [];
  let inFlight: string | null = null;
  let error: string | null = null;
  let stdout = '';
  let stderr = '';
  let pending = '';
  let killed = false;
  let armed = false;
  let exited = false;
  const timers: NodeJS.Timeout[] = [];
  const kill = (): void => {
    if (exited) return;
    killed = child.kill('SIGKILL');
  };
  const arm = (ms: number): void => {
    timers.push(setTimeout(kill, ms));
  };
  if (killAt !== null && 'afterStartMs' in killAt) arm(killAt.afterStartMs);
  timers.push(
    setTimeout(() => {
      if (!exited && !killed) {
        error = `still running after ${timeoutMs} ms${acks.length === 0 ? ', with no acknowledgement' : ''}`;
        kill();
      }
    }, timeoutMs),
  );
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    // A line without its newline was cut by the kill mid-write: not an acknowledgement.
    pending = lines.pop() ?? '';
    for (const raw of lines) {
      const line = parseWriterLine(raw);
      if (line === null) continue;
      if (line.kind === 'begin') inFlight = line.op;
      else if (line.kind === 'error') error = `${line.code}: ${line.message}`;
      else if (isAck(line)) {
        acks.push(line);
        inFlight = null;
        if (
          !armed &&
          killAt !== null &&
          'afterFirstAckMs' in killAt &&
          line.kind === killAt.armOn
        ) {
          armed = true;
          arm(killAt.afterFirstAckMs);
        }
      }
    }
  });
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  child.on('exit', () => {
    exited = true;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      for (const t of timers) clearTimeout(t);
      resolve({
        acks,
        inFlight,
        killed,
        exitCode,
        signal,
        stdout,
        stderr,
        error,
        ms: performance.now() - t0,
      });
    });
  });
}

/** A one-line account of why a child stopped by itself. */
export function childFailure(run: ChildRun): string {
  if (run.error !== null) return run.error;
  const last = run.stderr.trim().split('\n').slice(-3).join(' | ');
  return `exited ${run.exitCode ?? run.signal ?? '?'}${last === '' ? '' : `: ${last}`}`;
}
