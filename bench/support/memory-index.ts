/**
 * An in-memory copy of the recall index the store keeps for one LoCoMo conversation (same
 * analysis, same statistics), so lexical search can be ranked over it without a store.
 */
import type { LexicalIndexPort, Posting, TurnMeta } from '../../src/domain/recall-index.js';
import { analyze } from '../../src/rules.js';
import type { LocomoConversation } from '../../eval/locomo-data.js';
import { locomoSessionId } from '../../eval/run-locomo.js';

/** An in-memory LexicalIndexPort over one conversation. */
export function memoryIndex(
  conv: LocomoConversation,
  terms: (speaker: string, content: string) => string[] = (speaker, content) => [
    ...analyze(speaker),
    ...analyze(content),
  ],
): LexicalIndexPort {
  const postings = new Map<string, Posting[]>();
  const metas = new Map<string, TurnMeta>();
  const sessionStats = new Map<string, { turns: number; len: number }>();
  const sdf = new Map<string, Set<string>>();
  let totalLen = 0;
  for (const s of conv.sessions) {
    const session = locomoSessionId(conv.id, s.number);
    let len = 0;
    for (const t of s.turns) {
      const turnTerms = terms(t.speaker, t.content);
      metas.set(`${session}:${t.seq}`, {
        session,
        seq: t.seq,
        terms: turnTerms,
        turn: {
          id: t.diaId,
          role: 'user',
          speaker: t.speaker,
          content: t.content,
          corrective: false,
          receipt: null,
          recordedAt: s.date,
        },
      });
      const tf = new Map<string, number>();
      for (const x of turnTerms) tf.set(x, (tf.get(x) ?? 0) + 1);
      for (const [term, n] of tf) {
        const list = postings.get(term) ?? [];
        list.push({ session, seq: t.seq, tf: n, len: turnTerms.length });
        postings.set(term, list);
        const ss = sdf.get(term) ?? new Set();
        ss.add(session);
        sdf.set(term, ss);
      }
      len += turnTerms.length;
    }
    totalLen += len;
    sessionStats.set(session, { turns: s.turns.length, len });
  }
  const turns = [...sessionStats.values()].reduce((n, s) => n + s.turns, 0);
  return {
    lookup: (terms) =>
      Promise.resolve({
        corpus: { turns, sessions: sessionStats.size, totalLen },
        terms: new Map(
          terms
            .filter((t) => postings.has(t))
            .map((t) => [t, { df: postings.get(t)?.length ?? 0, sdf: sdf.get(t)?.size ?? 0 }]),
        ),
      }),
    postings: (terms, sessions, withSessions) => {
      const only = sessions === null ? null : new Set(sessions);
      const out = new Map<string, Posting[]>();
      const seen = new Map<string, { turns: number; len: number }>();
      for (const t of terms) {
        const list = (postings.get(t) ?? []).filter((x) => only === null || only.has(x.session));
        if (list.length > 0) out.set(t, list);
        if (!withSessions) continue;
        for (const x of list) {
          seen.set(x.session, sessionStats.get(x.session) ?? { turns: 0, len: 0 });
        }
      }
      return Promise.resolve({ postings: out, sessions: seen });
    },
    sessionTotals: (terms) => {
      const out = new Map<string, { session: string; tf: number }[]>();
      for (const t of terms) {
        const bySession = new Map<string, number>();
        for (const x of postings.get(t) ?? []) {
          bySession.set(x.session, (bySession.get(x.session) ?? 0) + x.tf);
        }
        if (bySession.size > 0) {
          out.set(
            t,
            [...bySession].map(([session, tf]) => ({ session, tf })),
          );
        }
      }
      return Promise.resolve(out);
    },
    turns: (keys, withTerms) =>
      Promise.resolve(
        keys.flatMap((k) => {
          const m = metas.get(`${k.session}:${k.seq}`);
          return m === undefined ? [] : [{ ...m, terms: withTerms ? m.terms : [] }];
        }),
      ),
  };
}
