import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anthropicSystem,
  generateOwnerKey,
  loadOwnerKey,
  openAISystem,
  writeOwnerKeyFile,
  type Arrival,
  type Engine,
  type OwnerSigner,
  type SubjectHandle,
  type FactId,
} from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { engineBeside, ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { TEST_KEYS } from './support/test-keys.js';

const tmp = mkdtempSync(join(tmpdir(), 'memledger-arrival-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const HOUR = 3_600_000;

function block(arrival: { blocks: Array<{ name: string; text: string }> }, name: string): string {
  const b = arrival.blocks.find((x) => x.name === name);
  if (b === undefined) throw new Error(`no block ${name}`);
  return b.text;
}

describe.each(ENGINES)('arrival [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let signer: OwnerSigner;
  const now = new Date('2026-10-22T08:00:00Z');
  let me: SubjectHandle;
  let counter = 0;

  beforeAll(async () => {
    t = await openTestEngine(kind, {
      clock: () => now,
      // the owner's key from outside the store, as the CLI reads it from the key file
      anchor: () => ({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem, source: 'a test' }),
      arrival: {
        identity: 'You are Luna, a long-running companion.',
        timeZone: 'Europe/Stockholm',
        blocks: [
          {
            name: 'open_tickets',
            tier: 'session',
            sql: `SELECT count(*)::int AS n FROM sessions WHERE subject_id = $1`,
            params: (ctx) => [ctx.subjectId],
            format: (rows) => `[Host] sessions on record: ${String(rows[0]?.n)}`,
          },
        ],
      },
    });
    engine = t.engine;
    const file = join(tmp, `${kind}.key`);
    writeOwnerKeyFile(file, generateOwnerKey('pw', TEST_KEYS).keyFile);
    signer = loadOwnerKey(file, 'pw', TEST_KEYS);
  });
  afterAll(async () => {
    await t.close();
  });

  async function freshSubject(): Promise<SubjectHandle> {
    const subject = `a${++counter}`;
    await engine.subjects.create(subject);
    me = engine.subject(subject);
    await me.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
    return me;
  }

  it('orders blocks by tier and records a manifest with a SHA-256 per block', async () => {
    await freshSubject();
    const s = await me.sessions.create();
    const a = await me.arrival.assemble({ surface: 'chat', sessionId: s.id });
    expect(a.blocks.map((b) => [b.name, b.tier])).toEqual([
      ['identity', 'static'],
      ['standing_rules', 'static'],
      ['capabilities', 'static'],
      ['live_facts', 'semi-stable'],
      ['recent_sessions', 'session'],
      ['relevant', 'session'],
      ['open_tickets', 'session'],
      ['integrity', 'volatile'],
      ['settled_facts', 'volatile'],
      ['current_time', 'volatile'],
    ]);
    for (const b of a.blocks) expect(b.sha256).toMatch(/^[0-9a-f]{64}$/);
    // the integrity block says nothing while everything verifies, and the text leaves it out
    expect(block(a, 'integrity')).toBe('');
    expect(a.text).not.toContain('Integrity warning');
    // with no message, the relevant block is empty too (test/arrival-relevant.test.ts)
    expect(block(a, 'relevant')).toBe('');
    expect(block(a, 'open_tickets')).toBe('[Host] sessions on record: 1');
    expect(block(a, 'current_time')).toBe('[Now] 2026-10-22 10:00 (Thu) Europe/Stockholm');
    expect(a.text.indexOf('You are Luna')).toBeLessThan(a.text.indexOf('[Now]'));
    const rows = await storeClient(engine).query<{ blocks: unknown; tool_count: number }>(
      'SELECT blocks, tool_count FROM arrival_manifests WHERE id = $1',
      [a.manifestId],
    );
    expect(rows.rows).toHaveLength(1);
  });

  it('says how many commitments are open from a COUNT, and lists three', async () => {
    await freshSubject();
    for (let i = 1; i <= 6; i++)
      await me.commitments.add({ title: `commitment ${i}`, due: `2026-10-2${i}` });
    const closed = await me.commitments.add({ title: 'closed one' });
    await me.commitments.done(closed.id);
    const a = await me.arrival.assemble({ surface: 'chat' });
    const settled = block(a, 'settled_facts');
    expect(settled).toContain('Open commitments: 6 open; latest 3:');
    expect(settled.match(/"commitment \d"/g)).toHaveLength(3);
    expect(settled).not.toContain('closed one');
    expect(settled.split('\n').length).toBeLessThanOrEqual(8);
  });

  it('renders a DATE as written, whatever the zone', async () => {
    await freshSubject();
    await me.commitments.add({ title: 'file the report', due: '2026-10-22' });
    for (const zone of [
      'Europe/Stockholm',
      'America/Los_Angeles',
      'Pacific/Kiritimati',
      'Pacific/Pago_Pago',
    ]) {
      await me.arrival.setTimeZone(zone);
      expect(block(await me.arrival.assemble({ surface: 'chat' }), 'settled_facts')).toContain(
        '(due 2026-10-22)',
      );
    }
    expect(await me.arrival.timeZone()).toBe('Pacific/Pago_Pago');
  });

  it('shows recent confirmed actions, retractions, due falsifiers and the pile', async () => {
    await freshSubject();
    const at = (h: number) => new Date(now.getTime() - h * HOUR);
    await me.actions.record({
      tool: 'send_email',
      surface: 'chat',
      target: 'invoice to Acme',
      completedAt: at(1),
    });
    await me.actions.record({
      tool: 'old_tool',
      surface: 'wake',
      target: 'too old',
      completedAt: at(49),
    });
    await me.actions.record({
      tool: 'failed_tool',
      surface: 'wake',
      target: 'failed',
      status: 'failed',
      completedAt: at(2),
    });
    await me.actions.record({
      tool: 'queued',
      surface: 'wake',
      target: 'pending',
      status: 'pending',
    });
    await me.ledger.retract({
      claim: 'The worker left no artifacts.',
      stoodOn: 'a summary',
      whyWrong: 'the file was there',
      corrected: 'The worker left a 17-byte artifact.',
      procedure: 'ls artifacts/',
      passObservation: 'probe.txt exists',
      overturnCondition: 'artifacts/ is empty',
      correctedAt: new Date(now.getTime() - 4 * 24 * HOUR),
    });
    const s = await me.sessions.create();
    await me.turns.add({ sessionId: s.id, role: 'user', content: 'Keep your answers short.' });
    await me.gate.propose({
      sessionId: s.id,
      proposals: [
        {
          slot: 'stances',
          text: 'Keep answers short.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'Keep your answers short' },
        },
      ],
    });
    const settled = block(
      await me.arrival.assemble({ surface: 'wake', sessionId: s.id }),
      'settled_facts',
    );
    expect(settled).toContain('send_email on chat → invoice to Acme (2026-10-22 09:00)');
    expect(settled).not.toContain('old_tool');
    expect(settled).not.toContain('failed_tool');
    expect(settled).not.toContain('queued');
    expect(settled).toContain(
      '"The worker left no artifacts." → now: "The worker left a 17-byte artifact."',
    );
    expect(settled).toContain('Falsifiers due: 1 (oldest due 2026-10-21)');
    expect(settled).toContain('Proposals awaiting owner review: 1');
  });

  it('shows the 3 latest confirmed actions up to now, inside 48 hours, newest first', async () => {
    // a fresh subject with these actions (target, hours before now): what its arrival lists
    const shown = async (actions: ReadonlyArray<readonly [string, number]>) => {
      await freshSubject();
      for (const [target, h] of actions) {
        const completedAt = new Date(now.getTime() - h * HOUR);
        await me.actions.record({ tool: 't', surface: 'chat', target, completedAt });
      }
      const settled = block(await me.arrival.assemble({ surface: 'chat' }), 'settled_facts');
      const line = settled.split('\n').find((l) => l.startsWith('Confirmed actions')) ?? '';
      return [...line.matchAll(/→ (\w+)/g)].map((m) => m[1]);
    };
    // five inside the window, one after the arrival's now, and older ones beyond the window
    expect(
      await shown([
        ['w47', 47],
        ['w30', 30],
        ['w3', 3],
        ['w20', 20],
        ['w10', 10],
        ['later', -1],
        ['o49', 49],
        ['o60', 60],
      ]),
    ).toEqual(['w3', 'w10', 'w20']);
    // only one inside the window: it alone, though older ones are among the 3 latest
    expect(
      await shown([
        ['w5', 5],
        ['o49', 49],
        ['o50', 50],
        ['o51', 51],
      ]),
    ).toEqual(['w5']);
  });

  it("lists the 5 most recently active other sessions, newest first; the arrival's own is left out wherever it ranks", async () => {
    let clock = new Date('2026-10-20T08:00:00Z');
    // an engine of its own clock on this store, for a subject of its own
    const fresh = await engineBeside(t, {
      clock: () => clock,
      arrival: { timeZone: 'Europe/Stockholm' },
    });
    try {
      const id = `a${++counter}`;
      await fresh.subjects.create(id);
      const owner = fresh.subject(id);
      const ids: string[] = [];
      // s1 … s7, each with a turn an hour after the last; s4 has none (its creation counts)
      for (let i = 1; i <= 7; i++) {
        clock = new Date(clock.getTime() + HOUR);
        const s = await owner.sessions.create({ title: `s${i}` });
        ids.push(s.id);
        if (i !== 4) await owner.turns.add({ sessionId: s.id, role: 'user', content: `turn ${i}` });
      }
      clock = new Date(clock.getTime() + HOUR);
      const listed = async (sessionId?: string) => {
        const text = block(
          await owner.arrival.assemble({ surface: 'chat', ...(sessionId ? { sessionId } : {}) }),
          'recent_sessions',
        );
        return [...text.matchAll(/^- (s\d): (\d+) turns(?:, last (.+))?$/gm)].map(
          (m) => `${m[1]} ${m[2]} ${m[3] ?? 'never'}`,
        );
      };
      // in the newest session: the next five
      expect(await listed(ids[6])).toEqual([
        's6 1 2026-10-20 16:00',
        's5 1 2026-10-20 15:00',
        's4 0 never',
        's3 1 2026-10-20 13:00',
        's2 1 2026-10-20 12:00',
      ]);
      // in the oldest (not among the five): the five newest
      expect((await listed(ids[0])).map((l) => l.split(' ')[0])).toEqual([
        's7',
        's6',
        's5',
        's4',
        's3',
      ]);
      // in one ranked among them: it is left out and the sixth takes its place
      expect((await listed(ids[4])).map((l) => l.split(' ')[0])).toEqual([
        's7',
        's6',
        's4',
        's3',
        's2',
      ]);
      // no session: the five newest
      expect((await listed()).map((l) => l.split(' ')[0])).toEqual(['s7', 's6', 's5', 's4', 's3']);
    } finally {
      await fresh.close();
    }
  });

  const byNameOf = (a: { blocks: Array<{ name: string }> }) =>
    new Map(a.blocks.map((b) => [b.name, b]));

  it('never fails for a block that throws or hangs: fallbacks stand in, marked degraded, in the manifest', async () => {
    await freshSubject();
    engine.addArrivalBlock({
      name: 'broken',
      tier: 'session',
      fallback: '[broken] fallback',
      render: () => Promise.reject(new Error('boom')),
    });
    engine.addArrivalBlock({
      name: 'hangs',
      tier: 'volatile',
      timeoutMs: 200,
      fallback: '[hangs] fallback',
      render: () => new Promise<string>(() => undefined),
    });
    engine.addArrivalBlock({
      name: 'writes',
      tier: 'session',
      sql: `INSERT INTO subjects (id, created_at) VALUES ('intruder', now()) RETURNING id`,
      format: () => 'wrote',
    });
    // a host block that answers with memledger's own shape (text and memories it claims to
    // show) is no text: only memledger's blocks name what an arrival showed
    engine.addArrivalBlock({
      name: 'claims_memories',
      tier: 'session',
      fallback: '[claims_memories] fallback',
      render: (async () => ({
        text: 'shown',
        shown: [{ block: 'claims_memories', kind: 'fact', id: 'forged', line: 'x', passport: {} }],
      })) as never,
    });
    const a = await me.arrival.assemble({ surface: 'chat' });
    expect(byNameOf(a).get('claims_memories')).toMatchObject({
      degraded: true,
      text: '[claims_memories] fallback',
      reason: 'the block returned no text',
    });
    expect(a.memories.map((m) => m.id)).not.toContain('forged');
    const byName = new Map(a.blocks.map((b) => [b.name, b]));
    expect(byName.get('broken')).toMatchObject({
      degraded: true,
      text: '[broken] fallback',
      reason: 'boom',
    });
    expect(byName.get('hangs')).toMatchObject({
      degraded: true,
      text: '[hangs] fallback',
      reason: 'timeout',
    });
    expect(byName.get('writes')?.degraded).toBe(true);
    expect(byName.get('settled_facts')?.degraded).toBe(false);
    expect(
      (await storeClient(engine).query(`SELECT id FROM subjects WHERE id = 'intruder'`)).rows,
    ).toEqual([]);
    const m = await storeClient(engine).query<{ degraded: string[] }>(
      'SELECT degraded FROM arrival_manifests WHERE id = $1',
      [a.manifestId],
    );
    expect([...(m.rows[0]?.degraded ?? [])].sort()).toEqual([
      'broken',
      'claims_memories',
      'hangs',
      'writes',
    ]);
  });

  /** A subject of `e` (its first, unless named), with a session where the user said where they live. */
  async function ownerInLund(e: Engine, id?: string) {
    const store = storeClient(e);
    await e.subjects.create(id);
    const owner = e.subject(id);
    const s = await owner.sessions.create();
    await owner.turns.add({ sessionId: s.id, role: 'user', content: 'I live in Lund.' });
    return { e, store, owner, s };
  }

  it('when the now read fails, the opening still stands and only the now blocks degrade', async () => {
    // an engine without the host block on this store, for a subject of its own
    const fresh = await engineBeside(t, { clock: () => now });
    try {
      const { store, owner, s } = await ownerInLund(fresh, `a${++counter}`);
      const NOW_BLOCKS = ['current_time', 'recent_sessions', 'settled_facts'];
      const degraded = (a: Arrival) =>
        a.blocks
          .filter((b) => b.degraded)
          .map((b) => b.name)
          .sort();
      const whole = await owner.arrival.assemble({ surface: 'chat', sessionId: s.id });
      expect(degraded(whole)).toEqual([]);
      // the now's reads fail (a table they read is gone); the opening's do not
      await store.query('ALTER TABLE commitments RENAME TO commitments_away');
      try {
        const a = await owner.arrival.assemble({ surface: 'chat', sessionId: s.id });
        expect(degraded(a)).toEqual(NOW_BLOCKS);
        // what the opening read is still there: the surface's tools
        expect(block(a, 'capabilities')).toContain('surface chat');
        // and an unknown session is still refused, not papered over
        await expect(
          owner.arrival.assemble({ surface: 'chat', sessionId: 'no-such-session' }),
        ).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
      } finally {
        await store.query('ALTER TABLE commitments_away RENAME TO commitments');
      }
      expect(degraded(await owner.arrival.assemble({ surface: 'chat', sessionId: s.id }))).toEqual(
        [],
      );
    } finally {
      await fresh.close();
    }
  });

  it('gives host blocks a read-only executor: no write, escape or session setting gets through', async () => {
    const fresh = await openTestEngine(kind, { clock: () => now });
    try {
      const { e, store, owner, s } = await ownerInLund(fresh.engine);
      await owner.gate.propose({
        sessionId: s.id,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            text: 'The user lives in Lund.',
            origin: 'saw',
            evidence: { turn: 1, quote: 'I live in Lund' },
          },
        ],
      });
      const pathBefore = (
        await store.query<{ p: string }>(`SELECT current_setting('search_path') AS p`)
      ).rows[0]?.p;
      const attempts: Record<string, string> = {
        updates: `UPDATE facts SET status = 'active' WHERE subject_id = $1 AND status = 'proposed' RETURNING id`,
        inserts: `INSERT INTO subjects (id, created_at) VALUES ('intruder', now()) RETURNING id`,
        commits_first: `COMMIT; INSERT INTO subjects (id, created_at) VALUES ('intruder', now())`,
        reopens: `SET TRANSACTION READ WRITE`,
        reopens_then_updates: `SET TRANSACTION READ WRITE; UPDATE facts SET status = 'active'`,
      };
      for (const [name, sql] of Object.entries(attempts)) {
        e.addArrivalBlock({
          name,
          tier: 'session',
          sql,
          ...(sql.includes('$1') ? { params: (ctx) => [ctx.subjectId] } : {}),
          format: () => `[${name}] ran`,
        });
      }
      // A session setting is no write, but it would outlive the block and redirect later reads.
      e.addArrivalBlock({
        name: 'moves_search_path',
        tier: 'session',
        sql: `SELECT set_config('search_path', 'pg_catalog', false) AS p`,
        format: () => '[moves_search_path] ran',
      });
      expect(() =>
        e.addArrivalBlock({ name: 'live_facts', tier: 'static', render: async () => 'x' }),
      ).toThrow(expect.objectContaining({ code: 'BLOCK_EXISTS' }));

      const a = await owner.arrival.assemble({ surface: 'chat', sessionId: s.id });
      const byName = new Map(a.blocks.map((b) => [b.name, b]));
      for (const name of Object.keys(attempts)) {
        expect(byName.get(name), name).toMatchObject({ degraded: true });
      }
      expect(byName.get('settled_facts')?.degraded).toBe(false);
      expect((await store.query(`SELECT id FROM subjects WHERE id = 'intruder'`)).rows).toEqual([]);
      expect(
        (await store.query<{ status: string }>('SELECT status FROM facts')).rows.map(
          (r) => r.status,
        ),
      ).toEqual(['proposed']);
      expect(await owner.facts.live()).toEqual([]);
      expect(await owner.gate.pile()).toHaveLength(1);
      expect(
        (await store.query<{ p: string }>(`SELECT current_setting('search_path') AS p`)).rows[0]?.p,
      ).toBe(pathBefore);
      const again = await owner.arrival.assemble({ surface: 'chat' });
      expect(again.blocks.find((b) => b.name === 'live_facts')?.degraded).toBe(false);
    } finally {
      await fresh.close();
    }
  });

  it("reads only its own subject: another subject's session, arrival and commitment are not found", async () => {
    const alice = await freshSubject();
    const bob = await freshSubject();
    const session = await alice.sessions.create();
    const arrival = await alice.arrival.assemble({ surface: 'chat', sessionId: session.id });
    const promise = await alice.commitments.add({ title: 'call the plumber' });
    await expect(
      bob.arrival.assemble({ surface: 'chat', sessionId: session.id }),
    ).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
    await expect(bob.arrival.diff({ manifestId: arrival.manifestId })).rejects.toMatchObject({
      code: 'MANIFEST_NOT_FOUND',
    });
    await expect(bob.arrival.diff({ surface: 'chat' })).rejects.toMatchObject({
      code: 'MANIFEST_NOT_FOUND',
    });
    await expect(bob.commitments.done(promise.id)).rejects.toMatchObject({
      code: 'COMMITMENT_NOT_FOUND',
    });
    await expect(bob.commitments.drop(promise.id)).rejects.toMatchObject({
      code: 'COMMITMENT_NOT_FOUND',
    });
    expect(await bob.commitments.list()).toEqual([]);
    expect(await alice.commitments.list()).toMatchObject([{ id: promise.id, status: 'open' }]);
    expect(await alice.arrival.diff({ manifestId: arrival.manifestId })).toMatchObject({
      from: null,
      to: arrival.manifestId,
    });
  });

  it('guards its closed vocabularies for JavaScript callers, naming the field', async () => {
    await freshSubject();
    const loose = me as unknown as {
      commitments: { list(o: unknown): Promise<unknown> };
      actions: { record(i: unknown): Promise<unknown> };
    };
    await expect(loose.commitments.list({ status: 'closed' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      data: { field: 'status' },
    });
    await expect(
      loose.actions.record({ tool: 't', surface: 'chat', target: 'x', status: 'done' }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', data: { field: 'status' } });
  });

  it('binds the tools a surface declares, and diffs exactly a new tool and a superseded fact', async () => {
    // an engine without the host block on this store, for a subject of its own
    const fresh = await engineBeside(t, { clock: () => now });
    try {
      const id = `a${++counter}`;
      await fresh.subjects.create(id);
      const e = fresh.subject(id);
      await e.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
      await e.tools.register({ name: 'web_search', surfaces: ['chat', 'wake'] });
      await e.tools.register({ name: 'send_email', surfaces: ['chat'] });
      const s = await e.sessions.create();
      await e.turns.add({ sessionId: s.id, role: 'user', content: 'I live in Lund.' });
      await e.turns.add({ sessionId: s.id, role: 'user', content: 'I moved to Malmö.' });
      const first = await e.gate.propose({
        sessionId: s.id,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            key: 'city',
            text: 'The user lives in Lund.',
            origin: 'saw',
            evidence: { turn: 1, quote: 'I live in Lund' },
          },
        ],
      });
      await e.owner.decide({
        proposalId: first.proposed[0]?.id ?? ('' as FactId),
        decision: 'approve',
        signer,
      });

      const before = await e.arrival.assemble({ surface: 'wake' });
      expect(before.tools).toEqual(['web_search']);
      expect(block(before, 'capabilities')).toContain('web_search');
      expect(block(before, 'capabilities')).not.toContain('send_email');
      const chat = await e.arrival.assemble({ surface: 'chat' });
      expect(chat.tools).toEqual(['send_email', 'web_search']);

      await e.tools.register({ name: 'check_workers', surfaces: ['wake'] });
      const second = await e.gate.propose({
        sessionId: s.id,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            key: 'city',
            text: 'The user lives in Malmö.',
            origin: 'saw',
            evidence: { turn: 2, quote: 'I moved to Malmö' },
          },
        ],
      });
      await e.owner.decide({
        proposalId: second.proposed[0]?.id ?? ('' as FactId),
        decision: 'approve',
        signer,
      });

      const after = await e.arrival.assemble({ surface: 'wake' });
      expect(after.tools).toEqual(['check_workers', 'web_search']);
      const diff = await e.arrival.diff({ surface: 'wake' });
      expect(diff).toEqual({
        from: before.manifestId,
        to: after.manifestId,
        surface: 'wake',
        blocks: { added: [], removed: [], changed: ['live_facts'] },
        tools: { added: ['check_workers'], removed: [], countBefore: 1, countAfter: 2 },
      });
      expect(await e.arrival.diff({ manifestId: before.manifestId })).toMatchObject({
        from: null,
        tools: { added: ['web_search'] },
      });
    } finally {
      await fresh.close();
    }
  });

  it('gives Anthropic and OpenAI system content with cache breakpoints after each stable tier', async () => {
    await freshSubject();
    const a = await me.arrival.assemble({ surface: 'chat' });
    const parts = anthropicSystem(a.blocks);
    expect(parts).toHaveLength(4);
    expect(parts.map((p) => p.cache_control?.type ?? null)).toEqual([
      'ephemeral',
      'ephemeral',
      'ephemeral',
      null,
    ]);
    expect(parts[3]?.text).toContain('[Now]');
    const openai = openAISystem(a.blocks);
    expect(openai.role).toBe('system');
    expect(openai.content.map((c) => c.text).join('\n\n')).toBe(a.text);
  });
});
