import { storeClient } from '../../src/engine/test-access.js';
import { isEngineError, type Engine, type Fact } from '../../src/index.js';
import { ackKey, type Ack } from './crash-acks.js';

/** An acknowledged write the reopened store does not hold as it was acknowledged. */
export interface LostAck {
  key: string;
  why: string;
}

/**
 * Looks up every acknowledged write in the reopened store, through the public API where it has a
 * read (sessions by id, turns by session and seq, proposals by id with their text and status)
 * and the decisions table for decisions (seq → proposal and decision; the chain itself is
 * checked by `verifyChain`). A decision's proposal must also carry the status it was given.
 */
export async function lostAcks(engine: Engine, acks: readonly Ack[]): Promise<LostAck[]> {
  const me = engine.subject();
  const lost: LostAck[] = [];
  const miss = (a: Ack, why: string): void => {
    lost.push({ key: ackKey(a), why });
  };

  const sessions = new Set<string>();
  for (const a of acks) {
    if (a.kind === 'session') sessions.add(a.id);
    if (a.kind === 'turn') sessions.add(a.sessionId);
  }
  const turns = new Map<string, Map<number, { id: string; content: string }>>();
  const missingSessions = new Set<string>();
  for (const id of sessions) {
    try {
      await me.sessions.get(id);
      const rows = await me.history.turns(id);
      turns.set(id, new Map(rows.map((t) => [t.seq, { id: t.id, content: t.content }])));
    } catch (err) {
      if (!isEngineError(err) || err.code !== 'SESSION_NOT_FOUND') throw err;
      missingSessions.add(id);
    }
  }
  const facts = new Map<string, Fact>((await me.facts.all()).map((f) => [f.id, f]));
  const { rows } = await storeClient(engine).query<{
    seq: number;
    proposal_id: string;
    decision: string;
  }>('SELECT seq, proposal_id, decision FROM decisions WHERE subject_id = $1', [me.id]);
  const decisions = new Map(rows.map((r) => [Number(r.seq), r]));

  for (const a of acks) {
    switch (a.kind) {
      case 'session':
        if (missingSessions.has(a.id)) miss(a, 'session not found');
        break;
      case 'turn': {
        if (missingSessions.has(a.sessionId)) {
          miss(a, 'its session is not found');
          break;
        }
        const t = turns.get(a.sessionId)?.get(a.seq);
        if (t === undefined) miss(a, `no turn #${a.seq}`);
        else if (t.id !== a.id) miss(a, `turn #${a.seq} is another turn (${t.id}, not ${a.id})`);
        else if (t.content !== a.content) miss(a, `turn #${a.seq} has other content`);
        break;
      }
      case 'proposal': {
        const f = facts.get(a.id);
        if (f === undefined) miss(a, 'proposal not found');
        else if (f.text !== a.text) miss(a, 'proposal has other text');
        break;
      }
      case 'decision': {
        const d = decisions.get(a.seq);
        const f = facts.get(a.proposalId);
        if (d === undefined) miss(a, `no decision #${a.seq}`);
        else if (d.proposal_id !== a.proposalId || d.decision !== a.decision)
          miss(a, `decision #${a.seq} is ${d.decision} of ${d.proposal_id}`);
        else if (f === undefined) miss(a, `decision #${a.seq}: its proposal is gone`);
        else if (f.status !== a.status)
          miss(a, `decision #${a.seq}: proposal is ${f.status}, acknowledged ${a.status}`);
        break;
      }
    }
  }
  return lost;
}
