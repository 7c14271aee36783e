/**
 * bench:serve's traffic: each request is one of four routes, chosen by a seeded weighted random
 * (issue 13: record a turn 40%, recall 30%, arrival 20%, propose 10%), and filled in for the
 * connection that sends it. Each connection is one agent with a live session of its own: its
 * turns go there (user, then assistant with a receipt, alternately), its chat arrivals name it.
 * Recall queries are words drawn from the seeded user turns. Proposals cite seeded user turns:
 * most quote the turn exactly (proposed, unless that claim is already pending or live, then
 * DUPLICATE), some misquote it (QUOTE_NOT_FOUND), some cite the assistant's reply
 * (EVIDENCE_NOT_USER_TURN), so the gate's drop paths are under load too.
 */
import { BenchError } from './bench-error.js';
import { seededRandom } from './seeded-random.js';
import { FACT_SLOT, type QuotableTurn, type ServeFixture } from './serve-seed.js';
import { assistantTurn, misquote, pick, recallQuery, userTurn } from './serve-text.js';

export const ROUTES = ['turn', 'recall', 'arrival', 'propose'] as const;
export type Route = (typeof ROUTES)[number];

/** Percent of requests per route. */
export const MIX: Readonly<Record<Route, number>> = {
  turn: 40,
  recall: 30,
  arrival: 20,
  propose: 10,
};

/** What each route sends, for the report. */
export const ROUTE_LABELS: Readonly<Record<Route, string>> = {
  turn: 'POST /v1/sessions/{id}/turns',
  recall: 'GET /v1/recall?q=…&k=10',
  arrival: 'POST /v1/arrival',
  propose: 'POST /v1/proposals',
};

/** Of the chat-or-wake choice of an arrival: chat (with the agent's live session) this often. */
const CHAT_SHARE = 0.7;
/** Of the proposals: an exact quote this often, a misquote and a self-citation share the rest. */
const EXACT_SHARE = 0.7;

export interface BuiltRequest {
  route: Route;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** Picks a route by the mix's weights. */
export function routePicker(random: () => number): () => Route {
  const total = ROUTES.reduce((n, r) => n + MIX[r], 0);
  return () => {
    let x = random() * total;
    for (const r of ROUTES) {
      x -= MIX[r];
      if (x < 0) return r;
    }
    return 'turn';
  };
}

/** One connection's agent: the subject its token names, and its seeded stream of requests. */
export interface ConnectionTraffic {
  subject: string;
  token: string;
  next(): BuiltRequest;
}

/**
 * The requests of one connection (one agent): connection c acts for subject c mod S and writes
 * into that subject's live session floor(c / S); the same seed gives the same stream.
 */
export function connectionTraffic(
  fixture: ServeFixture,
  connection: number,
  seed: number,
): ConnectionTraffic {
  const random = seededRandom(seed * 100_003 + connection);
  const nextRoute = routePicker(random);
  const n = fixture.subjects.length;
  const me = fixture.subjects[connection % n];
  if (me === undefined) throw new BenchError('the store has no subject');
  const session = me.liveSessions[Math.floor(connection / n) % me.liveSessions.length];
  if (session === undefined) throw new BenchError(`subject ${me.subject} has no live session`);
  const turnsPath = `/v1/sessions/${encodeURIComponent(session)}/turns`;
  const bySession = new Map<string, QuotableTurn[]>();
  for (const t of me.quotable) {
    const list = bySession.get(t.sessionId) ?? [];
    list.push(t);
    bySession.set(t.sessionId, list);
  }
  let userNext = true;
  const next = (): BuiltRequest => {
    const route = nextRoute();
    switch (route) {
      case 'turn': {
        const role = userNext ? 'user' : 'assistant';
        userNext = !userNext;
        let body: Record<string, unknown>;
        if (role === 'user') body = { role, content: userTurn(random).content };
        else {
          const a = assistantTurn(random);
          const receipt =
            a.tool === null
              ? { noTools: true }
              : { tools: [a.tool], sources: [`https://example.org/${a.tool}`] };
          body = { role, content: a.content, receipt };
        }
        return { route, method: 'POST', path: turnsPath, body: JSON.stringify(body) };
      }
      case 'recall': {
        const q = recallQuery(random, me.userTexts);
        return { route, method: 'GET', path: `/v1/recall?q=${encodeURIComponent(q)}&k=10` };
      }
      case 'arrival': {
        const body =
          random() < CHAT_SHARE ? { surface: 'chat', sessionId: session } : { surface: 'wake' };
        return { route, method: 'POST', path: '/v1/arrival', body: JSON.stringify(body) };
      }
      case 'propose': {
        const count = 1 + Math.floor(random() * 3);
        const cited = pick(random, me.quotable);
        const proposals = Array.from({ length: count }, () => {
          const q = pick(random, bySession.get(cited.sessionId) ?? [cited]);
          const x = random();
          const evidence =
            x < EXACT_SHARE
              ? { turn: q.seq, quote: q.quote }
              : x < (1 + EXACT_SHARE) / 2
                ? { turn: q.seq, quote: misquote(q.quote) }
                : { turn: q.seq + 1, quote: q.quote };
          return { slot: FACT_SLOT, text: q.claim, origin: 'saw', evidence };
        });
        const body = { sessionId: cited.sessionId, proposals };
        return { route, method: 'POST', path: '/v1/proposals', body: JSON.stringify(body) };
      }
    }
  };
  return { subject: me.subject, token: me.token, next };
}
