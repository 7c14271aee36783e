/**
 * The writer bench:crash kills (bench/crash-bench.ts). It opens an existing store through the
 * public engine API and writes until it is killed: turns, proposals, or proposals that the owner
 * then decides. After each call has resolved, and only then, it prints one acknowledgement line
 * on stdout (JSON: a session, a turn, a proposal or a decision), so every line the parent reads
 * names a write the engine said was committed. Before each call it prints the operation it
 * starts (`{"kind":"begin","op":…}`), so the parent knows what the kill interrupted.
 * Any error ends it with `{"kind":"error",…}` and exit code 1: a writer must never stop on its own.
 * Usage: node dist/bench/crash-writer.js --db D --workload turns|propose|decide --tag T
 * [--key F --passphrase-file P]   (the key and its passphrase are needed by `decide`)
 */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { createEngine, isEngineError, loadOwnerKey, type SubjectHandle } from '../src/index.js';
import { BenchError } from './support/bench-error.js';
import type { Ack, WriterLine } from './support/crash-acks.js';

function say(line: WriterLine): void {
  // A pipe is written synchronously on Linux: the line is in the parent's pipe before the next
  // write starts, so a SIGKILL cannot take back an acknowledgement once it was printed.
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

let current = 'start-up';
const ack = (a: Ack): void => say(a);
const begin = (op: string): void => {
  current = op;
  say({ kind: 'begin', op });
};

// The loop never ends by itself; an empty event loop means a call neither resolved nor rejected.
process.on('beforeExit', () => {
  say({
    kind: 'error',
    code: 'UNSETTLED',
    message: `the event loop emptied during ${current}: the call never settled`,
  });
  process.exit(1);
});

/** A user turn that states something the gate can check a proposal against. */
async function statement(me: SubjectHandle, sessionId: string, tag: string, n: number) {
  const place = `town-${tag}-${n}`;
  const content = `I moved to ${place} last spring, after the flood.`;
  begin('turn');
  const r = await me.turns.add({ sessionId, role: 'user', content });
  if (!r.recorded) throw new BenchError('a user turn was counted as a utility generation');
  ack({ kind: 'turn', sessionId, seq: r.turn.seq, id: r.turn.id, content });
  return { seq: r.turn.seq, quote: `I moved to ${place}`, text: `The user moved to ${place}` };
}

/** One proposal through the gate, citing the statement; a drop is a bench error. */
async function propose(
  me: SubjectHandle,
  sessionId: string,
  s: Awaited<ReturnType<typeof statement>>,
) {
  begin('propose');
  const result = await me.gate.propose({
    sessionId,
    proposedBy: 'crash-bench',
    proposals: [
      {
        slot: 'what_i_know_about_user',
        text: s.text,
        origin: 'saw',
        evidence: { turn: s.seq, quote: s.quote },
      },
    ],
  });
  const dropped = result.dropped[0];
  if (dropped !== undefined)
    throw new BenchError(`the gate dropped "${s.text}": ${dropped.code} ${dropped.reason}`);
  const p = result.proposed[0];
  if (p === undefined) throw new BenchError(`the gate returned nothing for "${s.text}"`);
  ack({ kind: 'proposal', id: p.id, text: p.text });
  return p.id;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string' },
      workload: { type: 'string' },
      tag: { type: 'string', default: '0' },
      key: { type: 'string' },
      'passphrase-file': { type: 'string' },
    },
  });
  const { db, workload, tag, key } = values;
  if (db === undefined || workload === undefined)
    throw new BenchError('usage: crash-writer --db D --workload turns|propose|decide --tag T');
  const engine = await createEngine({ db, create: false });
  const me = engine.subject();
  let signer: ReturnType<typeof loadOwnerKey> | null = null;
  if (workload === 'decide') {
    const file = values['passphrase-file'];
    const secret =
      file === undefined
        ? (process.env.MEMLEDGER_OWNER_PASSPHRASE ?? null)
        : readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    if (key === undefined || secret === null)
      throw new BenchError('decide needs --key and --passphrase-file');
    signer = loadOwnerKey(key, secret);
  } else if (workload !== 'turns' && workload !== 'propose') {
    throw new BenchError(`unknown workload "${workload}"`);
  }
  say({ kind: 'ready' });

  begin('session');
  const session = await me.sessions.create({ title: `crash ${workload} ${tag}` });
  ack({ kind: 'session', id: session.id });
  for (let n = 1; ; n++) {
    if (workload === 'turns') {
      const role = n % 2 === 1 ? 'user' : 'assistant';
      const content = `${role} turn ${n} of trial ${tag}: the quick brown fox, again and again.`;
      begin('turn');
      const r = await me.turns.add({
        sessionId: session.id,
        role,
        content,
        ...(role === 'assistant' ? { receipt: { noTools: true } } : {}),
      });
      if (!r.recorded) throw new BenchError('a turn was counted as a utility generation');
      ack({ kind: 'turn', sessionId: session.id, seq: r.turn.seq, id: r.turn.id, content });
      continue;
    }
    const s = await statement(me, session.id, tag, n);
    const proposalId = await propose(me, session.id, s);
    if (signer === null) continue;
    const decision = n % 2 === 1 ? 'approve' : 'reject';
    begin('decide');
    const d = await me.owner.decide({ proposalId, decision, signer, note: `trial ${tag}` });
    ack({ kind: 'decision', proposalId, decision, seq: d.seq, status: d.status });
  }
}

main().catch((err: unknown) => {
  say({
    kind: 'error',
    code: isEngineError(err) ? err.code : 'BENCH',
    message: err instanceof Error ? err.message : String(err),
  });
  process.exit(1);
});
