/**
 * Arrival benchmark: how long `engine.arrival.assemble` takes before the first token on a store
 * of a year's use (issue 5): 1,000 sessions, 100,000 turns, 10,000 facts, 1,000 retractions and
 * 1,000 commitments, all on ONE subject (every arrival block filters by subject, so one busy
 * subject is the worst case), plus a few smaller subjects so the subject filters have rows to
 * skip. The store is seeded with set-based SQL (INSERT … SELECT FROM generate_series) through
 * `engine.sql`, within every CHECK, foreign key and trigger of the schema: assistant turns carry
 * receipts, sessions.last_seq equals the session's turn count, facts cite real turns in declared
 * slots, supersessions are linked both ways, retracted facts point at their retraction, overturned
 * retractions restored their fact. The ground truth the settled-facts block reads is realistic:
 * about 30% of commitments open, actions over the last week (some within 48 h), retractions with
 * a mix of verdicts and due dates, 50 proposals in the pile, tools on the chat and wake surfaces.
 * The counts are checked after seeding, so the figures can never come from an empty store.
 *
 * Then `assemble` runs on `chat` (with the subject's latest session) and on `wake` (subject only,
 * no session: an agent woken by a schedule), alternately, N times each after a warm-up; every
 * arrival must come back with no degraded block. Each block's reads are also timed alone, one
 * after the other, through the same store classes the blocks use, to show where the time goes.
 * It reports; it never fails on a slow figure.
 * Usage: node dist/bench/arrival-bench.js [--arrivals N] [--warmup W] [--block-rounds R]
 * [--engines pglite,postgres] [--skip-analyze] [--json]
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { renderFactLine, type Arrival, type Engine } from '../src/index.js';
import type { ArrivalManifest } from '../src/domain/manifest.js';
import { ArrivalSql } from '../src/store/arrival-sql.js';
import { FactSql } from '../src/store/fact-sql.js';
import { SessionSql } from '../src/store/session-sql.js';
import { SubjectSql } from '../src/store/subject-sql.js';
import { ToolSql } from '../src/store/tool-sql.js';
import { benchKinds, withBenchStore } from '../cli/bench/bench-store.js';

const KINDS = ['pglite', 'postgres'] as const;
type Kind = (typeof KINDS)[number];
/** p95 of one arrival, in ms (issue 5). */
const TARGETS: Record<Kind, number> = { pglite: 25, postgres: 10 };
const SURFACES = ['chat', 'wake'] as const;
type Surface = (typeof SURFACES)[number];
const SUBJECT = 'owner';
const ZONE = 'Europe/Stockholm';
const OTHER_SUBJECTS = ['partner', 'team-desk', 'guest'];
/** How many live facts the live_facts block renders (builtin-blocks.ts). */
const LIVE_FACT_LIMIT = 40;

interface Scale {
  sessions: number;
  /** Even, at least 26 (turns 25, 51, 77 are the user's corrections). */
  turnsPerSession: number;
  facts: number;
  /** Facts still `proposed`: the pile awaiting owner review. */
  proposed: number;
  retractions: number;
  commitments: number;
  /** Actions over the last 7 days. */
  actions: number;
  /** Sessions, facts and commitments spread over this many days back from now. */
  historyDays: number;
}

const MAIN_SCALE: Scale = {
  sessions: 1_000,
  turnsPerSession: 100,
  facts: 10_000,
  proposed: 50,
  retractions: 1_000,
  commitments: 1_000,
  actions: 1_500,
  historyDays: 180,
};
const OTHER_SCALE: Scale = {
  sessions: 50,
  turnsPerSession: 40,
  facts: 500,
  proposed: 5,
  retractions: 50,
  commitments: 50,
  actions: 100,
  historyDays: 180,
};

/** Slots beyond the defaults that `init` declares. */
const EXTRA_SLOTS = [
  { name: 'actions_taken', rule: 'action', autoLive: true },
  { name: 'projects', rule: 'user_fact', autoLive: false },
];
const FACT_SLOTS = [
  'what_i_know_about_user',
  'stances',
  'corrections_received',
  'actions_taken',
  'projects',
];

const MAIN_TOOLS: Array<{ name: string; surfaces: Surface[]; description: string }> = [
  { name: 'calendar.create_event', surfaces: ['chat', 'wake'], description: 'Books an event' },
  { name: 'email.send', surfaces: ['chat'], description: 'Sends an email as the owner' },
  { name: 'tasks.update', surfaces: ['chat', 'wake'], description: 'Updates the task list' },
  { name: 'web_search', surfaces: ['chat'], description: 'Searches the web' },
  { name: 'files.write', surfaces: ['chat'], description: 'Writes a file in the workspace' },
  { name: 'notes.append', surfaces: ['chat', 'wake'], description: 'Appends to the notes' },
  { name: 'memledger.recall', surfaces: ['chat', 'wake'], description: 'Searches memory' },
  { name: 'inbox.triage', surfaces: ['wake'], description: 'Sorts the overnight inbox' },
];
const OTHER_TOOLS: Array<{ name: string; surfaces: Surface[]; description: string }> = [
  { name: 'web_search', surfaces: ['chat'], description: 'Searches the web' },
  { name: 'inbox.triage', surfaces: ['wake'], description: 'Sorts the overnight inbox' },
];
/** The tools the turns' receipts and the actions name (all registered on the main subject). */
const TOOL_NAMES = [
  'calendar.create_event',
  'email.send',
  'tasks.update',
  'web_search',
  'files.write',
  'notes.append',
];

// ---------------------------------------------------------------------------------------------
// Vocabulary for the generated rows, inlined into the SQL as array literals.

const NAMES = ['Maya', 'Tomas', 'Priya', 'Jonah', 'Ines', 'Kofi', 'Lena', 'Arjun', 'Sofia'];
const CITIES = ['Porto', 'Leeds', 'Osaka', 'Denver', 'Tallinn', 'Cork', 'Ghent', 'Quito', 'Perth'];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];
const TIMES = ['7:30', '8:15', '9:00', '12:30', '13:45', '16:00', '17:30'];
const MONTHS = ['March', 'April', 'May', 'June', 'September', 'October'];
const PROJECTS = [
  'website redesign',
  'warehouse move',
  'podcast launch',
  'grant application',
  'Q3 hiring plan',
  'customer survey',
  'office fit-out',
  'newsletter relaunch',
  'data migration',
];
const PAYEES = [
  'Northwind Logistics',
  'Acme Print',
  'Blue Harbor Legal',
  'Kestrel IT',
  'Larchmont Catering',
  'Orbit Freight',
  'Sable Design',
  'Tern Analytics',
  'Umber Studio',
  'Vale Consulting',
];
const STANCES = [
  'The user wants short answers, read on a phone',
  'The user prefers metric units to miles',
  'The user would rather get an email than a call',
  'The user wants the conclusion first, then details',
  'The user prefers plain text without emoji',
  'The user prefers meetings in the morning',
  'The user wants uncertainty said, not guessed',
  'The user prefers 24-hour times',
  'The user wants to be asked before bookings',
];

const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;
/** `(ARRAY[…])[1 + expr % n]`: a deterministic pick from a list. */
const pick = (list: readonly string[], expr: string): string =>
  `(ARRAY[${list.map(lit).join(', ')}])[1 + ((${expr}) % ${list.length})]`;

// ---------------------------------------------------------------------------------------------
// Seeding. Parameters are numbered per statement; `$2` is always the seeding clock's "now".

/** Which retraction j (1-based) stays unchecked, and how the settled ones were settled. */
function retractionPlan(scale: Scale): {
  factBacked: number;
  recentUnchecked: number;
  restored: number;
  base: number;
} {
  const factBacked = Math.round(scale.retractions * 0.9);
  const recentUnchecked = Math.ceil(scale.retractions * 0.04);
  let restored = 0;
  for (let j = 1; j <= factBacked; j++) {
    const unchecked = j > scale.retractions - recentUnchecked || j % 50 === 25;
    if (!unchecked && j % 10 === 0) restored++;
  }
  // Overturned retractions restored a copy of their fact; the copies count among the facts.
  const base = scale.facts - restored;
  if (10 * (factBacked - 1) + 2 > base - scale.proposed)
    throw new Error('scale: too few facts for the retracted ones');
  if (scale.turnsPerSession < 26 || scale.turnsPerSession % 2 !== 0)
    throw new Error('scale: turnsPerSession must be even and at least 26');
  return { factBacked, recentUnchecked, restored, base };
}

/** SQL for "retraction j stays unchecked"; j from the id's last five digits. */
const UNCHECKED = (j: string, r: string, recent: string): string =>
  `(${j} > ${r} - ${recent} OR ${j} % 50 = 25)`;

async function seedSubject(engine: Engine, subject: string, scale: Scale, now: Date) {
  const q = (sql: string, params: unknown[]) => engine.sql.query(sql, params);
  const plan = retractionPlan(scale);
  const S = scale.sessions;
  const T = scale.turnsPerSession;

  await engine.init({ subject });
  for (const slot of EXTRA_SLOTS) {
    await q(
      `INSERT INTO slots (subject_id, name, rule, auto_live, declared_at) VALUES ($1, $3, $4, $5, $2)`,
      [subject, now, slot.name, slot.rule, slot.autoLive],
    );
  }

  // Sessions, oldest first, evenly over the history; the newest started a few hours ago.
  await q(
    `INSERT INTO sessions (subject_id, id, title, last_seq, created_at)
     SELECT $1, $1 || '-s' || lpad(g::text, 5, '0'),
            CASE WHEN g % 20 = 0 THEN NULL
                 ELSE ${pick(['Planning the ', 'Notes on the ', 'Catch-up about the ', 'Budget for the '], 'g')}
                      || ${pick(PROJECTS, 'g / 4')} END,
            $4::int,
            $2::timestamptz - make_interval(days => $5::int) * (($3::int - g + 1)::float8 / $3::int)
     FROM generate_series(1, $3::int) g`,
    [subject, now, S, T, scale.historyDays],
  );

  // Turns: user on odd seqs, assistant on even ones, 20 s apart. Every assistant turn has a
  // receipt: tools on seq ≡ 2 (mod 4), "unknown" on every 20th, "none" otherwise. Turns 25, 51
  // and 77 are the user's corrections.
  const n = `substr(s.id, length(s.subject_id) + 3)::int`;
  const userText = `CASE (${n} * 3 + k) % 6
      WHEN 0 THEN 'Can you move the budget review with ' || ${pick(PAYEES, `${n} + k`)} || ' to ' || ${pick(WEEKDAYS, 'k')} || ' at ' || ${pick(TIMES, `${n} * 5 + k`)} || '?'
      WHEN 1 THEN 'My sister ' || ${pick(NAMES, `${n} + k`)} || ' is visiting from ' || ${pick(CITIES, `${n} * 7 + k`)} || ' next week, keep the evenings free.'
      WHEN 2 THEN 'Remind me to send the ' || ${pick(PROJECTS, `${n} + k`)} || ' update before ' || ${pick(WEEKDAYS, `${n} + k`)} || '.'
      WHEN 3 THEN 'Actually, that is wrong: the meeting with ' || ${pick(PAYEES, `${n} * 3 + k`)} || ' was moved, not cancelled.'
      WHEN 4 THEN 'What is still open on the ' || ${pick(PROJECTS, `${n} * 7 + k`)} || ', and who is waiting on me?'
      ELSE 'I would rather get an email than a call about the ' || ${pick(PROJECTS, `${n} * 11 + k`)} || ', I read mail in the morning.'
    END`;
  const assistantText = `'Here is where the ' || ${pick(PROJECTS, `${n} + k`)} || ' stands: the draft is ready, '
      || 'two reviewers have commented, and the open question is the timeline. I suggest confirming '
      || 'the date with ' || ${pick(PAYEES, `${n} * 7 + k`)} || ' before ' || ${pick(WEEKDAYS, `${n} + k`)}
      || ' so the schedule holds; I can draft that note if you want.'`;
  await q(
    `INSERT INTO turns (subject_id, session_id, seq, id, role, content, corrective, receipt_kind,
                        receipt_tools, receipt_sources, recorded_at)
     SELECT s.subject_id, s.id, k, s.id || '-t' || k,
            CASE WHEN k % 2 = 1 THEN 'user' ELSE 'assistant' END,
            CASE WHEN k % 2 = 1 THEN ${userText} ELSE ${assistantText} END,
            k % 26 = 25,
            CASE WHEN k % 2 = 1 THEN NULL WHEN k % 4 = 2 THEN 'tools'
                 WHEN k % 20 = 0 THEN 'unknown' ELSE 'none' END,
            CASE WHEN k % 4 = 2 THEN ARRAY[${pick(TOOL_NAMES, `${n} * 7 + k / 4`)}] END,
            CASE WHEN k % 4 = 2 THEN ARRAY['https://intranet.example.org/docs/' || ${n} || '/' || k] END,
            s.created_at + k * interval '20 seconds'
     FROM sessions s CROSS JOIN generate_series(1, $2::int) k
     WHERE s.subject_id = $1`,
    [subject, T],
  );

  // Facts 1..base, in time order, each citing a turn of the session of its time. Decades i/10
  // share a slot; i ≡ 0 (mod 10) was superseded by i + 1 (same slot and key); i ≡ 2 was
  // retracted (the first factBacked of them); the last `proposed` wait in the pile.
  const corrections = Math.floor((T - 25) / 26) + 1;
  const factId = (i: string) => `$1 || '-f' || lpad((${i})::text, 6, '0')`;
  await q(
    `WITH ft AS (
       SELECT i, 1 + ((i - 1) * $3::int) / $5::int AS g,
              $2::timestamptz - make_interval(days => $8::int)
                * (($3::int - (1 + ((i - 1) * $3::int) / $5::int) + 1)::float8 / $3::int)
                + $4::int * interval '20 seconds' + (5 + i % 50) * interval '1 minute' AS at
       FROM generate_series(1, $5::int + 1) i
     ), f1 AS (
       SELECT ft.i, ft.g, ft.at, nx.at AS next_at,
              CASE
                WHEN ft.i > $5::int - $6::int THEN 'proposed'
                WHEN ft.i % 10 = 0 AND ft.i < $5::int - $6::int THEN 'superseded'
                WHEN ft.i % 10 = 1 THEN 'active'
                WHEN ft.i % 10 = 2 AND ft.i / 10 < $7::int THEN 'retracted'
                WHEN ft.i % 30 = 5 THEN 'rejected'
                WHEN ft.i % 50 = 7 THEN 'expired'
                WHEN ft.i % 50 = 17 THEN 'unverified'
                ELSE 'active'
              END AS status,
              ${pick(FACT_SLOTS, 'ft.i / 10')} AS slot
       FROM ft JOIN ft nx ON nx.i = ft.i + 1
       WHERE ft.i <= $5::int
     ), f2 AS (
       SELECT f1.*,
              CASE f1.slot WHEN 'actions_taken' THEN 'did' WHEN 'corrections_received' THEN 'saw'
                ELSE CASE WHEN f1.i % 9 = 0 THEN 'inferred' WHEN f1.i % 23 = 0 THEN 'summarized'
                          ELSE 'saw' END
              END AS origin
       FROM f1
     ), f AS (
       SELECT f2.*,
              $1 || '-s' || lpad(f2.g::text, 5, '0') || '-t' ||
              CASE WHEN f2.origin = 'did' THEN 2 + 4 * ((f2.i * 7) % ($4::int / 4))
                   WHEN f2.slot = 'corrections_received' THEN 25 + 26 * (f2.i % $9::int)
                   ELSE 1 + 2 * ((f2.i * 13) % ($4::int / 2)) END AS turn_id
       FROM f2
     )
     INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
                        evidence_session_id, evidence_seq, evidence_quote, evidence_tool, proposed_by,
                        supersedes_id, superseded_by_id, valid_from, valid_to, recorded_at, status_at,
                        superseded_at, promoted_by)
     SELECT $1, ${factId('f.i')}, f.slot,
            CASE WHEN f.i % 10 = 9 THEN NULL WHEN f.i % 10 IN (0, 1) THEN 'k' || (f.i / 10)
                 ELSE 'k' || (f.i / 10) || '_' || (f.i % 10) END,
            CASE f.slot
              WHEN 'what_i_know_about_user' THEN
                ${pick(["The user's sister lives in ", "The user's team is based in ", 'The user grew up in ', 'The user travels every month to ', "The user's accountant works from "], 'f.i')}
                || ${pick(CITIES, 'f.i / 5')}
              WHEN 'stances' THEN ${pick(STANCES, 'f.i / 3')}
              WHEN 'corrections_received' THEN 'The meeting with ' || ${pick(PAYEES, 'f.i')}
                || ' was moved to ' || ${pick(WEEKDAYS, 'f.i / 10')} || ', not cancelled'
              WHEN 'actions_taken' THEN
                ${pick(['Booked a call with ', 'Emailed the signed contract to ', 'Filed the invoice from ', 'Scheduled the quarterly review with ', 'Sent the revised budget to '], 'f.i')}
                || ${pick(PAYEES, 'f.i / 5')}
              ELSE 'The ' || ${pick(PROJECTS, 'f.i')} || ' is due in ' || ${pick(MONTHS, 'f.i / 9')}
            END,
            f.origin, f.status,
            f.origin = 'did' OR (f.origin = 'saw' AND f.i % 17 <> 0),
            t.id, t.session_id, t.seq,
            CASE WHEN f.origin = 'saw' THEN left(t.content, 60) END,
            CASE WHEN f.origin = 'did' THEN t.receipt_tools[1] END,
            'reflection',
            CASE WHEN f.i % 10 = 1 AND f.i > 1 AND f.i - 1 < $5::int - $6::int
                 THEN ${factId('f.i - 1')} END,
            CASE WHEN f.status = 'superseded' THEN ${factId('f.i + 1')} END,
            CASE WHEN f.i % 4 = 0 THEN f.at - interval '3 days' END,
            CASE WHEN f.status = 'expired' THEN f.at + interval '1 day' END,
            f.at,
            CASE f.status WHEN 'proposed' THEN f.at WHEN 'superseded' THEN f.next_at + interval '1 hour'
                          ELSE f.at + interval '1 hour' END,
            CASE WHEN f.status = 'superseded' THEN f.next_at + interval '1 hour' END,
            CASE WHEN f.status IN ('proposed', 'rejected', 'unverified') THEN NULL
                 WHEN f.slot = 'actions_taken' THEN 'receipt' ELSE 'owner' END
     FROM f JOIN turns t ON t.id = f.turn_id`,
    [
      subject,
      now,
      S,
      T,
      plan.base,
      scale.proposed,
      plan.factBacked,
      scale.historyDays,
      corrections,
    ],
  );

  // Retractions, recorded unchecked as the ledger does: the fact-backed ones a few days after
  // their fact, the rest (claims made in chat, no fact) every 4 hours up to now.
  await q(
    `INSERT INTO retractions (subject_id, id, claim, claimed_at, claim_surface, claim_ref, stood_on,
                              why_wrong, corrected_claim, corrected_at, caught_by, tags, procedure,
                              pass_observation, overturn_condition, due_at, fact_id, recorded_at)
     SELECT $1, $1 || '-r' || lpad(j::text, 5, '0'),
            coalesce(f.text, 'I already sent the invoice to ' || ${pick(PAYEES, 'j')}),
            coalesce(f.recorded_at, c.at - interval '2 hours'),
            CASE WHEN f.id IS NULL THEN ${pick(['chat', 'wake'], 'j')} ELSE 'memory' END,
            f.evidence_turn_id,
            CASE WHEN f.id IS NULL THEN 'my own earlier reply, with no tool receipt'
                 ELSE 'a reflection over turn ' || f.evidence_seq || ' of ' || f.evidence_session_id END,
            ${pick(['the quote was about someone else', 'the user was speaking hypothetically', 'no tool ran: the receipt says none', 'the plan changed the next day'], 'j')},
            CASE WHEN f.id IS NULL THEN 'No invoice was sent to ' || ${pick(PAYEES, 'j')} || '; no tool ran'
                 ELSE 'Not established: ' || f.text END,
            c.at,
            ${pick(['self', 'owner', 'together', 'reality'], 'j')},
            ARRAY[${pick(['misattribution', 'unreceipted-action', 'stale-plan', 'hypothetical'], 'j')}],
            'Ask the owner at the next check-in, or look for a receipt',
            'the owner confirms the correction',
            'the owner confirms the original claim',
            c.at + interval '3 days',
            f.id,
            c.at
     FROM generate_series(1, $3::int) j
     LEFT JOIN (
       SELECT id, text, recorded_at, evidence_turn_id, evidence_seq, evidence_session_id,
              row_number() OVER (ORDER BY recorded_at, id) AS rn
       FROM facts WHERE subject_id = $1 AND status = 'retracted'
     ) f ON f.rn = j AND j <= $4::int
     CROSS JOIN LATERAL (
       SELECT CASE WHEN f.id IS NOT NULL THEN f.recorded_at + (1 + j % 5) * interval '1 day'
                   ELSE $2::timestamptz - ($3::int - j + 1) * interval '4 hours' END AS at
     ) c`,
    [subject, now, scale.retractions, plan.factBacked],
  );
  // The retracted facts learn their retraction, as FactSql.retract writes it.
  await q(
    `UPDATE facts SET retraction_id = r.id, status_at = r.corrected_at
     FROM retractions r WHERE r.subject_id = $1 AND r.fact_id = facts.id AND facts.subject_id = $1`,
    [subject],
  );
  // Settlement, as the ledger writes it: overturned retractions restore a copy of their fact
  // (proposed by 'restoration', promoted by the settlement), then the settlement is written.
  const j = `right(r.id, 5)::int`;
  const unchecked = UNCHECKED(j, '$2::int', '$3::int');
  const verdict = `CASE WHEN ${j} % 10 = 0 THEN 'overturned' WHEN ${j} % 10 = 7 THEN 'unresolvable'
                        ELSE 'stands' END`;
  await q(
    `INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
                        evidence_session_id, evidence_seq, evidence_quote, evidence_tool, proposed_by,
                        valid_from, valid_to, recorded_at, status_at, promoted_by, restored_from_id)
     SELECT f.subject_id, f.id || '-restored', f.slot, f.key, f.text, f.origin, 'active', f.attested,
            f.evidence_turn_id, f.evidence_session_id, f.evidence_seq, f.evidence_quote, f.evidence_tool,
            'restoration', f.valid_from, f.valid_to, r.due_at + interval '2 hours',
            r.due_at + interval '2 hours', 'restoration', f.id
     FROM retractions r JOIN facts f ON f.id = r.fact_id
     WHERE r.subject_id = $1 AND NOT ${unchecked} AND ${verdict} = 'overturned'`,
    [subject, scale.retractions, plan.recentUnchecked],
  );
  await q(
    `UPDATE retractions r SET verdict = ${verdict},
            settled_at = r.due_at + interval '2 hours',
            settled_outcome = CASE ${verdict}
              WHEN 'stands' THEN 'the owner confirmed the correction'
              WHEN 'overturned' THEN 'the owner confirmed the original claim after all'
              ELSE 'the owner could not say either way' END,
            settled_by = CASE WHEN ${j} % 3 = 0 THEN 'probe' ELSE 'owner' END,
            restored_fact_id = CASE WHEN ${verdict} = 'overturned' AND r.fact_id IS NOT NULL
                                    THEN r.fact_id || '-restored' END
     WHERE r.subject_id = $1 AND NOT ${unchecked}`,
    [subject, scale.retractions, plan.recentUnchecked],
  );

  // Commitments: exactly 30% open ((37 j) mod 100 is a permutation), 10% dropped, 60% done;
  // due dates a third none, the rest from ten days before to a month after creation.
  await q(
    `INSERT INTO commitments (subject_id, id, title, due_date, status, created_at, status_at)
     SELECT $1, $1 || '-c' || lpad(j::text, 5, '0'),
            ${pick(['Send the revised budget to ', 'Book a call with ', 'Review the contract from ', 'Follow up with ', 'Draft the proposal for ', 'Pay the invoice from '], 'j')}
              || ${pick(PAYEES, 'j / 6')},
            CASE WHEN j % 3 = 0 THEN NULL ELSE (x.at AT TIME ZONE 'UTC')::date + (j % 45) - 10 END,
            x.status, x.at,
            CASE WHEN x.status = 'open' THEN x.at
                 ELSE least(x.at + (1 + j % 20) * interval '1 day', $2::timestamptz - interval '10 minutes') END
     FROM generate_series(1, $3::int) j
     CROSS JOIN LATERAL (
       SELECT $2::timestamptz - make_interval(days => $4::int) * (($3::int - j + 1)::float8 / $3::int) AS at,
              CASE WHEN (j * 37) % 100 < 30 THEN 'open' WHEN (j * 37) % 100 < 40 THEN 'dropped'
                   ELSE 'done' END AS status
     ) x`,
    [subject, now, scale.commitments, scale.historyDays],
  );

  // Actions over the last 7 days: 5% failed, a few recent ones pending, the rest confirmed.
  await q(
    `INSERT INTO actions (subject_id, id, tool, surface, target_summary, status, completed_at, recorded_at)
     SELECT $1, $1 || '-a' || lpad(j::text, 6, '0'), ${pick(TOOL_NAMES, 'j')},
            ${pick(['chat', 'chat', 'wake', 'cli'], 'j / 6')},
            ${pick(['Call with ', 'Email to ', 'Task for ', 'Search on ', 'Invoice file for ', 'Note about '], 'j')}
              || ${pick(PAYEES, 'j / 6')},
            x.status, CASE WHEN x.status = 'pending' THEN NULL ELSE x.at END, x.at
     FROM generate_series(1, $3::int) j
     CROSS JOIN LATERAL (
       SELECT $2::timestamptz - interval '7 days' * (($3::int - j + 1)::float8 / $3::int) AS at,
              CASE WHEN j % 20 = 7 THEN 'failed' WHEN j % 20 = 13 AND j > $3::int - 100 THEN 'pending'
                   ELSE 'confirmed' END AS status
     ) x`,
    [subject, now, scale.actions],
  );
}

interface Counts {
  sessions: number;
  turns: number;
  sessionsWithWrongLastSeq: number;
  facts: number;
  factsByStatus: Record<string, number>;
  retractions: number;
  retractionsByVerdict: Record<string, number>;
  falsifiersDue: number;
  commitments: number;
  openCommitments: number;
  actions: number;
  confirmedActions48h: number;
  tools: Record<Surface, number>;
}

async function countSubject(engine: Engine, subject: string, now: Date): Promise<Counts> {
  const one = async (sql: string, params: unknown[] = [subject]): Promise<number> => {
    const { rows } = await engine.sql.query<{ n: number }>(sql, params);
    return rows[0]?.n ?? -1;
  };
  const grouped = async (sql: string): Promise<Record<string, number>> => {
    const { rows } = await engine.sql.query<{ k: string; n: number }>(sql, [subject]);
    return Object.fromEntries(rows.map((r) => [r.k, r.n]));
  };
  return {
    sessions: await one('SELECT count(*)::int AS n FROM sessions WHERE subject_id = $1'),
    turns: await one('SELECT count(*)::int AS n FROM turns WHERE subject_id = $1'),
    sessionsWithWrongLastSeq: await one(
      `SELECT count(*)::int AS n FROM sessions s
       LEFT JOIN (SELECT session_id, count(*) AS c, max(seq) AS m FROM turns WHERE subject_id = $1
                  GROUP BY session_id) t ON t.session_id = s.id
       WHERE s.subject_id = $1 AND (s.last_seq <> coalesce(t.c, 0) OR s.last_seq <> coalesce(t.m, 0))`,
    ),
    facts: await one('SELECT count(*)::int AS n FROM facts WHERE subject_id = $1'),
    factsByStatus: await grouped(
      'SELECT status AS k, count(*)::int AS n FROM facts WHERE subject_id = $1 GROUP BY status ORDER BY 2 DESC',
    ),
    retractions: await one('SELECT count(*)::int AS n FROM retractions WHERE subject_id = $1'),
    retractionsByVerdict: await grouped(
      'SELECT verdict AS k, count(*)::int AS n FROM retractions WHERE subject_id = $1 GROUP BY verdict ORDER BY 2 DESC',
    ),
    falsifiersDue: await one(
      `SELECT count(*)::int AS n FROM retractions WHERE subject_id = $1 AND verdict = 'unchecked' AND due_at <= $2`,
      [subject, now],
    ),
    commitments: await one('SELECT count(*)::int AS n FROM commitments WHERE subject_id = $1'),
    openCommitments: await one(
      `SELECT count(*)::int AS n FROM commitments WHERE subject_id = $1 AND status = 'open'`,
    ),
    actions: await one('SELECT count(*)::int AS n FROM actions WHERE subject_id = $1'),
    confirmedActions48h: await one(
      `SELECT count(*)::int AS n FROM actions WHERE subject_id = $1 AND status = 'confirmed'
         AND completed_at > $2::timestamptz - interval '48 hours' AND completed_at <= $2`,
      [subject, now],
    ),
    tools: {
      chat: await one(
        `SELECT count(*)::int AS n FROM tools WHERE subject_id = $1 AND 'chat' = ANY (surfaces)`,
      ),
      wake: await one(
        `SELECT count(*)::int AS n FROM tools WHERE subject_id = $1 AND 'wake' = ANY (surfaces)`,
      ),
    },
  };
}

/** The store must hold what the scale asks for, or the figures would measure something else. */
function checkCounts(c: Counts, scale: Scale, tools: number): string[] {
  const problems: string[] = [];
  const expect = (what: string, got: number, want: number) => {
    if (got !== want) problems.push(`${what}: ${got}, expected ${want}`);
  };
  const atLeast = (what: string, got: number, min: number) => {
    if (got < min) problems.push(`${what}: ${got}, expected at least ${min}`);
  };
  expect('sessions', c.sessions, scale.sessions);
  expect('turns', c.turns, scale.sessions * scale.turnsPerSession);
  expect('sessions whose last_seq is not their turn count', c.sessionsWithWrongLastSeq, 0);
  expect('facts', c.facts, scale.facts);
  expect('proposed facts', c.factsByStatus.proposed ?? 0, scale.proposed);
  atLeast('active facts', c.factsByStatus.active ?? 0, LIVE_FACT_LIMIT + 1);
  expect('retractions', c.retractions, scale.retractions);
  atLeast('falsifiers due', c.falsifiersDue, 1);
  for (const v of ['stands', 'overturned', 'unresolvable', 'unchecked'])
    atLeast(`${v} retractions`, c.retractionsByVerdict[v] ?? 0, 1);
  expect('commitments', c.commitments, scale.commitments);
  atLeast('open commitments', c.openCommitments, Math.floor(scale.commitments * 0.25));
  expect('actions', c.actions, scale.actions);
  atLeast('confirmed actions in the last 48 h', c.confirmedActions48h, 3);
  atLeast('tools on chat', c.tools.chat, 1);
  atLeast('tools on wake', c.tools.wake, 1);
  if (c.tools.chat > tools || c.tools.wake > tools) problems.push('more tools than registered');
  return problems;
}

interface SeedResult {
  seedMs: number;
  analyzeMs: number | null;
  counts: Counts;
  others: { subjects: number; sessions: number; turns: number; facts: number };
  table: Record<string, number>;
  sessionId: string;
}

async function seed(engine: Engine, analyze: boolean): Promise<SeedResult> {
  const now = new Date();
  const t0 = performance.now();
  await seedSubject(engine, SUBJECT, MAIN_SCALE, now);
  await engine.timeZone.set({ subject: SUBJECT, zone: ZONE });
  for (const t of MAIN_TOOLS) await engine.tools.register({ subject: SUBJECT, ...t });
  for (const other of OTHER_SUBJECTS) {
    await seedSubject(engine, other, OTHER_SCALE, now);
    for (const t of OTHER_TOOLS) await engine.tools.register({ subject: other, ...t });
  }
  const seedMs = performance.now() - t0;
  let analyzeMs: number | null = null;
  if (analyze) {
    // A live PostgreSQL store has been vacuumed and analyzed by autovacuum long before a year of
    // use (so counts can be answered from the index alone); PGlite runs no autovacuum, so it only
    // gets ANALYZE, which lets the planner see the real table sizes.
    const a0 = performance.now();
    await engine.sql.exec(engine.kind === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE');
    analyzeMs = performance.now() - a0;
  }

  const counts = await countSubject(engine, SUBJECT, now);
  const problems = checkCounts(counts, MAIN_SCALE, MAIN_TOOLS.length);
  for (const other of OTHER_SUBJECTS) {
    const c = await countSubject(engine, other, now);
    problems.push(...checkCounts(c, OTHER_SCALE, OTHER_TOOLS.length).map((p) => `${other}: ${p}`));
  }
  if (problems.length > 0)
    throw new Error(`the seeded store is not what was asked for:\n  ${problems.join('\n  ')}`);

  const table: Record<string, number> = {};
  for (const t of [
    'subjects',
    'sessions',
    'turns',
    'facts',
    'retractions',
    'commitments',
    'actions',
    'tools',
    'slots',
  ]) {
    const { rows } = await engine.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}`);
    table[t] = rows[0]?.n ?? -1;
  }
  const k = OTHER_SUBJECTS.length;
  return {
    seedMs,
    analyzeMs,
    counts,
    others: {
      subjects: k,
      sessions: k * OTHER_SCALE.sessions,
      turns: k * OTHER_SCALE.sessions * OTHER_SCALE.turnsPerSession,
      facts: k * OTHER_SCALE.facts,
    },
    table,
    // The subject's latest session: the one a chat arrival would continue.
    sessionId: `${SUBJECT}-s${String(MAIN_SCALE.sessions).padStart(5, '0')}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring.

interface Stats {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles. */
function stats(xs: readonly number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number): number => s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
  return {
    n: s.length,
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: s[s.length - 1] ?? NaN,
    mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length),
  };
}

interface BlockTiming {
  step: string;
  /** The arrival block this read belongs to, or the part of assemble around the blocks. */
  part: string;
  stats: Stats;
}

interface EngineResult {
  engine: Kind;
  target: number;
  seed: SeedResult;
  arrivals: Record<Surface, Stats>;
  met: boolean;
  degradedArrivals: number;
  blocks: BlockTiming[];
  sample: { chat: Record<string, string>; wake: Record<string, string> };
}

function assertWhole(a: Arrival, surface: Surface, expectOpen: number): void {
  const degraded = a.blocks.filter((b) => b.degraded);
  if (degraded.length > 0) {
    throw new Error(
      `${surface} arrival degraded: ${degraded.map((b) => `${b.name} (${b.reason ?? '?'})`).join(', ')}`,
    );
  }
  const settled = a.blocks.find((b) => b.name === 'settled_facts')?.text ?? '';
  if (!settled.includes(`Open commitments: ${expectOpen} open`))
    throw new Error(
      `${surface} arrival: the settled-facts block does not count ${expectOpen} open`,
    );
}

async function measure(
  engine: Engine,
  seeded: SeedResult,
  arrivals: number,
  warmup: number,
  blockRounds: number,
): Promise<Omit<EngineResult, 'engine' | 'target' | 'seed' | 'met'>> {
  const inputs: Record<Surface, { surface: Surface; sessionId?: string; subject?: string }> = {
    chat: { surface: 'chat', sessionId: seeded.sessionId },
    wake: { surface: 'wake', subject: SUBJECT },
  };
  const open = seeded.counts.openCommitments;
  const blockTexts = (a: Arrival) => Object.fromEntries(a.blocks.map((b) => [b.name, b.text]));
  const sample = {
    chat: blockTexts(await engine.arrival.assemble(inputs.chat)),
    wake: blockTexts(await engine.arrival.assemble(inputs.wake)),
  };
  for (let i = 0; i < warmup; i++) {
    for (const s of SURFACES) assertWhole(await engine.arrival.assemble(inputs[s]), s, open);
  }
  const times: Record<Surface, number[]> = { chat: [], wake: [] };
  let degradedArrivals = 0;
  for (let i = 0; i < arrivals; i++) {
    // Alternating which surface goes first spreads drift over both.
    const order = i % 2 === 0 ? SURFACES : [...SURFACES].reverse();
    for (const s of order) {
      const t0 = performance.now();
      const a = await engine.arrival.assemble(inputs[s]);
      times[s].push(performance.now() - t0);
      if (a.blocks.some((b) => b.degraded)) degradedArrivals++;
    }
  }

  // Each block's reads alone, through the store classes the blocks use, one after the other.
  const arrivalSql = new ArrivalSql(engine.sql);
  const facts = new FactSql(engine.sql);
  const sessions = new SessionSql(engine.sql);
  const subjects = new SubjectSql(engine.sql);
  const tools = new ToolSql(engine.sql);
  const sessionId = seeded.sessionId;
  // The manifest a real chat arrival recorded, written again under a new id each round (the
  // tool count is set from the names, whichever manifest shape the store reads back).
  const recorded = await arrivalSql.manifest(
    (await engine.arrival.assemble(inputs.chat)).manifestId,
  );
  if (recorded === null) throw new Error('the chat arrival recorded no manifest');
  const again = (): ArrivalManifest =>
    Object.assign({}, recorded, {
      id: randomUUID(),
      createdAt: new Date(),
      toolCount: recorded.tools.length,
    });
  const steps: Array<{ step: string; part: string; run: () => Promise<unknown> }> = [
    { step: 'sessions.get', part: 'assemble (before blocks)', run: () => sessions.get(sessionId) },
    {
      step: 'subjects.get',
      part: 'assemble (wake, before blocks)',
      run: () => subjects.get(SUBJECT),
    },
    {
      step: 'toolsFor',
      part: 'assemble (before blocks)',
      run: () => tools.toolsFor(SUBJECT, 'chat'),
    },
    { step: 'timeZone', part: 'assemble (before blocks)', run: () => arrivalSql.timeZone(SUBJECT) },
    {
      step: 'facts.recentLive(40) + render',
      part: 'live_facts',
      run: async () => {
        const live = await facts.recentLive(SUBJECT, LIVE_FACT_LIMIT);
        return live.facts.map((f) => renderFactLine(f, ZONE));
      },
    },
    {
      step: 'recentSessions + sessions.get',
      part: 'recent_sessions',
      run: async () => {
        await arrivalSql.recentSessions(SUBJECT, sessionId, ZONE, 5);
        return sessions.get(sessionId);
      },
    },
    {
      step: 'settled (6 queries)',
      part: 'settled_facts',
      run: () => arrivalSql.settled(SUBJECT, new Date(), ZONE),
    },
    {
      step: 'formatTime',
      part: 'current_time',
      run: () => arrivalSql.formatTime(new Date(), ZONE),
    },
    {
      step: 'recordManifest',
      part: 'assemble (after blocks)',
      run: () => arrivalSql.recordManifest(again()),
    },
  ];
  const blockTimes = steps.map(() => [] as number[]);
  for (let r = 0; r < blockRounds + Math.min(warmup, 5); r++) {
    for (const [i, s] of steps.entries()) {
      const t0 = performance.now();
      await s.run();
      if (r >= Math.min(warmup, 5)) blockTimes[i]?.push(performance.now() - t0);
    }
  }
  const blocks = steps
    .map((s, i) => ({ step: s.step, part: s.part, stats: stats(blockTimes[i] ?? []) }))
    .sort((a, b) => b.stats.p50 - a.stats.p50);
  return {
    arrivals: { chat: stats(times.chat), wake: stats(times.wake) },
    degradedArrivals,
    blocks,
    sample,
  };
}

// ---------------------------------------------------------------------------------------------

/** A fresh store (new PGlite instance or new schema), dropped even on failure. */
function withStore<T>(kind: Kind, fn: (engine: Engine) => Promise<T>): Promise<T> {
  return withBenchStore(kind, 'ml_arrival_bench', fn);
}

function positiveInt(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`--${name} must be a whole number >= ${min}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      arrivals: { type: 'string', default: '200' },
      warmup: { type: 'string', default: '20' },
      'block-rounds': { type: 'string', default: '100' },
      engines: { type: 'string', default: KINDS.join(',') },
      'skip-analyze': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const arrivals = positiveInt('arrivals', values.arrivals, 1);
  const warmup = positiveInt('warmup', values.warmup, 0);
  const blockRounds = positiveInt('block-rounds', values['block-rounds'], 1);
  const analyze = !values['skip-analyze'];
  const kinds = await benchKinds(values.engines);

  const results: EngineResult[] = [];
  for (const kind of kinds) {
    const result = await withStore(kind, async (engine) => {
      process.stderr.write(`${kind}: seeding…\n`);
      const seeded = await seed(engine, analyze);
      process.stderr.write(
        `${kind}: seeded in ${(seeded.seedMs / 1000).toFixed(1)} s; ${arrivals} arrivals per surface…\n`,
      );
      const m = await measure(engine, seeded, arrivals, warmup, blockRounds);
      const target = TARGETS[kind];
      const met = SURFACES.every((s) => m.arrivals[s].p95 <= target);
      return { engine: kind, target, seed: seeded, met, ...m };
    });
    results.push(result);
  }

  if (values.json) {
    console.log(
      JSON.stringify(
        {
          scale: MAIN_SCALE,
          otherSubjects: { subjects: OTHER_SUBJECTS, scale: OTHER_SCALE },
          arrivalsPerSurface: arrivals,
          warmup,
          blockRounds,
          analyzed: analyze,
          targetsP95Ms: TARGETS,
          results,
        },
        null,
        2,
      ),
    );
    return;
  }

  const ms = (n: number, w = 7): string => n.toFixed(1).padStart(w);
  const int = (n: number): string => n.toLocaleString('en-US');
  const c0 = results[0]?.seed.counts;
  if (c0 !== undefined) {
    const st = c0.factsByStatus;
    const rv = c0.retractionsByVerdict;
    const o = results[0]?.seed.others;
    console.log(
      `arrival: subject "${SUBJECT}" (zone ${ZONE}) holds ${int(c0.sessions)} sessions, ${int(c0.turns)} turns, ` +
        `${int(c0.facts)} facts, ${int(c0.retractions)} retractions, ${int(c0.commitments)} commitments, ` +
        `${int(c0.actions)} actions`,
    );
    console.log(
      `  facts: ${Object.entries(st)
        .map(([k, v]) => `${k} ${int(v)}`)
        .join(', ')}`,
    );
    console.log(
      `  retractions: ${Object.entries(rv)
        .map(([k, v]) => `${k} ${int(v)}`)
        .join(', ')}; falsifiers due ${c0.falsifiersDue}`,
    );
    console.log(
      `  commitments open ${c0.openCommitments}; actions confirmed in the last 48 h ${c0.confirmedActions48h}; ` +
        `tools bound on chat ${c0.tools.chat}, on wake ${c0.tools.wake}; ` +
        `every session's last_seq = its turn count`,
    );
    if (o !== undefined)
      console.log(
        `  plus ${o.subjects} other subjects: ${int(o.sessions)} sessions, ${int(o.turns)} turns, ${int(o.facts)} facts`,
      );
    console.log(
      `${arrivals} arrivals per surface after ${warmup} warm-up each; chat = session ${results[0]?.seed.sessionId}, ` +
        `wake = subject only (no session); ${analyze ? 'after seeding: VACUUM ANALYZE on PostgreSQL (what autovacuum does), ANALYZE on PGlite' : 'no ANALYZE after seeding'}`,
    );
  }
  console.log('');
  console.log(
    `${'engine'.padEnd(9)} ${'seed s'.padStart(7)}  ${'surface'.padEnd(7)} ${'p50 ms'.padStart(7)} ` +
      `${'p95 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)}  target p95  met`,
  );
  for (const r of results) {
    for (const [i, s] of SURFACES.entries()) {
      const a = r.arrivals[s];
      console.log(
        `${(i === 0 ? r.engine : '').padEnd(9)} ${i === 0 ? ms(r.seed.seedMs / 1000) : ' '.repeat(7)}  ${s.padEnd(7)} ` +
          `${ms(a.p50)} ${ms(a.p95)} ${ms(a.p99)} ${ms(a.max)}  <= ${String(r.target).padStart(2)} ms   ` +
          `${a.p95 <= r.target ? 'yes' : 'NO'}`,
      );
    }
  }
  for (const r of results) {
    console.log('');
    console.log(
      `${r.engine}: each read alone, ${blockRounds} rounds (arrival runs the blocks at once; ` +
        `${r.engine === 'pglite' ? 'PGlite has one connection, so they queue' : 'the pool runs them side by side'})`,
    );
    console.log(
      `  ${'block'.padEnd(31)} ${'read'.padEnd(35)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)}`,
    );
    for (const b of r.blocks) {
      console.log(
        `  ${b.part.padEnd(31)} ${b.step.padEnd(35)} ${ms(b.stats.p50)} ${ms(b.stats.p95)}`,
      );
    }
    const sum = r.blocks.reduce((a, b) => a + b.stats.p50, 0);
    console.log(`  ${'sum of medians'.padEnd(67)} ${ms(sum)}`);
    if (r.degradedArrivals > 0)
      console.log(`  WARNING: ${r.degradedArrivals} timed arrivals had a degraded block`);
  }
  const sample = results[0]?.sample.chat;
  if (sample !== undefined) {
    console.log('');
    console.log(`what a chat arrival said (${results[0]?.engine}):`);
    const live = (sample.live_facts ?? '').split('\n');
    console.log(`  ${live[0] ?? ''}`);
    console.log(`  ${live[1] ?? ''}`);
    for (const line of (sample.recent_sessions ?? '').split('\n').slice(0, 3))
      console.log(`  ${line}`);
    for (const line of (sample.settled_facts ?? '').split('\n')) console.log(`  ${line}`);
  }
  console.log('');
  for (const r of results) {
    const worst = SURFACES.reduce((a, s) => Math.max(a, r.arrivals[s].p95), 0);
    const slowest = r.blocks[0];
    console.log(
      `${r.engine}: p95 ${worst.toFixed(1)} ms vs target ${r.target} ms: ${r.met ? 'met' : 'NOT met'}` +
        (slowest === undefined
          ? ''
          : `; slowest read ${slowest.part} (${slowest.step}) at p50 ${slowest.stats.p50.toFixed(1)} ms`),
    );
  }
}

main().catch((err: unknown) => {
  console.error(`arrival-bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
