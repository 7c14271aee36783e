/**
 * The store bench:serve drives: a PGlite data directory in a temp dir, or a fresh PostgreSQL
 * schema, holding one subject (or several sharing the scale) seeded through its handle as an
 * agent would have filled it (sessions of alternating user and assistant turns, assistant turns
 * with receipts; some user facts proposed from real quotes and decided by the owner, so arrival
 * and recall have live, signed facts to show), "live" sessions for the load's turns and chat
 * arrivals (one per connection), and an agent token per subject. The seeding engine is closed
 * before the server opens the store.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PG_URL, withPgClient, type BenchKind } from '../../eval/bench-store.js';
import {
  createEngine,
  type Engine,
  type OwnerSigner,
  type SubjectHandle,
} from '../../src/index.js';
import { BenchError } from './bench-error.js';
import { seededRandom } from './seeded-random.js';
import { assistantTurn, userTurn } from './serve-text.js';

export const SUBJECT = 'serve-bench';
/** The slot the load proposes into. */
export const FACT_SLOT = 'what_i_know_about_user';

/** Where one engine's store lives, and how it goes away. */
export interface ServeStore {
  kind: BenchKind;
  /** The `--db` value for `memledger serve`. */
  db: string;
  /** The directory, or the schema, for the report. */
  label: string;
  /** Removes the directory or drops the schema; a failure is printed, never thrown. */
  cleanup(): Promise<void>;
}

/** A new, empty store location: a temp directory, or a schema no one has used. */
export function newServeStore(kind: BenchKind): ServeStore {
  if (kind === 'pglite') {
    const root = mkdtempSync(join(tmpdir(), 'memledger-serve-bench-'));
    const dir = join(root, 'store');
    return {
      kind,
      db: dir,
      label: dir,
      cleanup: async () => rmSync(root, { recursive: true, force: true }),
    };
  }
  const schema = `ml_serve_${process.pid}_${randomBytes(4).toString('hex')}`;
  return {
    kind,
    db: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`,
    label: `schema ${schema}`,
    cleanup: () =>
      withPgClient((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(
        () => undefined,
        (err: Error) => console.error(`serve-bench: could not drop ${schema}: ${err.message}`),
      ),
  };
}

export interface SeedScale {
  /** Seeded sessions, and turns in each (user and assistant alternate, user first). */
  sessions: number;
  turnsPerSession: number;
  /** Sessions the load writes into, one per connection (each starts with one exchange). */
  liveSessions: number;
  /** User turns proposed as facts and decided by the owner (two approved in three). */
  decided: number;
}

export const DEFAULT_SCALE: SeedScale = {
  sessions: 40,
  turnsPerSession: 80,
  liveSessions: 64,
  decided: 60,
};

/** A user turn a proposal can cite: its session, its seq, a sentence in it, and its claim. */
export interface QuotableTurn {
  sessionId: string;
  seq: number;
  quote: string;
  claim: string;
}

/** What the load needs to know about one seeded subject. */
export interface SubjectFixture {
  subject: string;
  /** The agent token's secret. */
  token: string;
  quotable: QuotableTurn[];
  /** The text of every seeded user turn (recall queries are drawn from their words). */
  userTexts: string[];
  liveSessions: string[];
}

export interface StoreCounts {
  subjects: number;
  sessions: number;
  turns: number;
  liveFacts: number;
  rejected: number;
  tools: number;
}

/** The seeded store: its subjects, what they hold in all, and how long seeding took. */
export interface ServeFixture {
  subjects: SubjectFixture[];
  counts: StoreCounts;
  seedMs: number;
}

async function addTurn(
  me: SubjectHandle,
  sessionId: string,
  role: 'user' | 'assistant',
  content: string,
  tool: string | null = null,
): Promise<number> {
  const receipt =
    role === 'user'
      ? {}
      : {
          receipt:
            tool === null
              ? { noTools: true }
              : { tools: [tool], sources: [`https://example.org/${tool}`] },
        };
  const r = await me.turns.add({ sessionId, role, content, ...receipt });
  if (!r.recorded) throw new BenchError(`a ${role} turn in ${sessionId} was not recorded`);
  return r.turn.seq;
}

const TOOLS = [
  { name: 'web_search', description: 'searches the web', surfaces: ['chat'] },
  { name: 'calendar_lookup', description: "reads the user's calendar", surfaces: ['chat', 'wake'] },
];

/** One subject seeded to `scale`, its counts read back, and its agent token. */
async function seedSubject(
  engine: Engine,
  subject: string,
  scale: SeedScale,
  r: () => number,
  signer: OwnerSigner,
  /** Before every session id: session ids are unique across the store, not per subject. */
  prefix: string,
): Promise<{ fixture: SubjectFixture; counts: Omit<StoreCounts, 'subjects'> }> {
  await engine.subjects.create(subject);
  const me = engine.subject(subject);
  await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
  for (const t of TOOLS) await me.tools.register(t);

  const quotable: QuotableTurn[] = [];
  const userTexts: string[] = [];
  for (let s = 0; s < scale.sessions; s++) {
    const sessionId = `${prefix}seed-${String(s).padStart(4, '0')}`;
    await me.sessions.create({ id: sessionId, title: `Week ${s + 1}` });
    for (let i = 0; i < scale.turnsPerSession; i++) {
      if (i % 2 === 0) {
        const u = userTurn(r);
        const seq = await addTurn(me, sessionId, 'user', u.content);
        quotable.push({ sessionId, seq, quote: u.quote, claim: u.claim });
        userTexts.push(u.content);
      } else {
        const a = assistantTurn(r);
        await addTurn(me, sessionId, 'assistant', a.content, a.tool);
      }
    }
  }
  const liveSessions: string[] = [];
  for (let c = 0; c < scale.liveSessions; c++) {
    const sessionId = `${prefix}live-${String(c).padStart(4, '0')}`;
    await me.sessions.create({ id: sessionId, title: `Agent ${c}` });
    await addTurn(me, sessionId, 'user', userTurn(r).content);
    const a = assistantTurn(r);
    await addTurn(me, sessionId, 'assistant', a.content, a.tool);
    liveSessions.push(sessionId);
  }

  // Facts the owner decided, from an evenly spread sample of quotable turns.
  let approved = 0;
  let rejected = 0;
  const step = Math.max(1, Math.floor(quotable.length / Math.max(1, scale.decided)));
  for (let i = 0; i < scale.decided && i * step < quotable.length; i++) {
    const q = quotable[i * step];
    if (q === undefined) break;
    const { proposed } = await me.gate.propose({
      sessionId: q.sessionId,
      proposals: [
        {
          slot: FACT_SLOT,
          text: q.claim,
          origin: 'saw',
          evidence: { turn: q.seq, quote: q.quote },
        },
      ],
    });
    const p = proposed[0];
    if (p === undefined) continue; // the same claim twice: DUPLICATE, as it should be
    const decision = i % 3 === 2 ? 'reject' : 'approve';
    await me.owner.decide({ proposalId: p.id, decision, signer });
    if (decision === 'approve') approved++;
    else rejected++;
  }

  const live = await me.facts.live();
  const sessions = await me.sessions.list({ limit: 1000 });
  let turns = 0;
  for (const s of sessions) turns += (await me.history.turns(s.id)).length;
  const wantSessions = scale.sessions + scale.liveSessions;
  const wantTurns = scale.sessions * scale.turnsPerSession + 2 * scale.liveSessions;
  if (sessions.length !== wantSessions || turns !== wantTurns || live.length !== approved) {
    throw new BenchError(
      `subject ${subject} holds ${sessions.length} sessions, ${turns} turns, ${live.length} live facts; ` +
        `expected ${wantSessions}, ${wantTurns}, ${approved}`,
    );
  }
  const { token } = await engine.subject(subject).owner.createToken({
    role: 'agent',
    name: 'serve-bench',
    signer,
  });
  return {
    fixture: { subject, token, quotable, userTexts, liveSessions },
    counts: {
      sessions: sessions.length,
      turns,
      liveFacts: live.length,
      rejected,
      tools: TOOLS.length,
    },
  };
}

/**
 * Seeds `store` (creating it) with `subjects` subjects that share `scale` between them (each
 * gets its share of the sessions and decisions, and its own live sessions and agent token); the
 * engine is closed on return. Every count is read back, so the figures can never come from an
 * empty store.
 */
export async function seedServeStore(
  store: ServeStore,
  scale: SeedScale,
  subjects: number,
  seed: number,
  signer: OwnerSigner,
): Promise<ServeFixture> {
  const t0 = performance.now();
  const r = seededRandom(seed);
  const share: SeedScale = {
    sessions: Math.max(1, Math.ceil(scale.sessions / subjects)),
    turnsPerSession: scale.turnsPerSession,
    liveSessions: Math.max(1, Math.ceil(scale.liveSessions / subjects)),
    decided: Math.ceil(scale.decided / subjects),
  };
  const engine = await createEngine({ db: store.db, create: true });
  try {
    const fixtures: SubjectFixture[] = [];
    const counts: StoreCounts = {
      subjects,
      sessions: 0,
      turns: 0,
      liveFacts: 0,
      rejected: 0,
      tools: 0,
    };
    for (let i = 0; i < subjects; i++) {
      const tag = String(i).padStart(3, '0');
      const name = subjects === 1 ? SUBJECT : `${SUBJECT}-${tag}`;
      const one = await seedSubject(
        engine,
        name,
        share,
        r,
        signer,
        subjects === 1 ? '' : `s${tag}-`,
      );
      fixtures.push(one.fixture);
      counts.sessions += one.counts.sessions;
      counts.turns += one.counts.turns;
      counts.liveFacts += one.counts.liveFacts;
      counts.rejected += one.counts.rejected;
      counts.tools = one.counts.tools;
    }
    return { subjects: fixtures, counts, seedMs: performance.now() - t0 };
  } finally {
    await engine.close();
  }
}
