import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anthropicSystem,
  generateOwnerKey,
  loadOwnerKey,
  openAISystem,
  writeOwnerKeyFile,
  type Engine,
  type OwnerSigner,
} from '../src/index.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';

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
  let subject = '';
  let counter = 0;

  beforeAll(async () => {
    t = await openTestEngine(kind, {
      clock: () => now,
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
    writeOwnerKeyFile(file, generateOwnerKey('pw').keyFile);
    signer = loadOwnerKey(file, 'pw');
  });
  afterAll(async () => {
    await t.close();
  });

  async function freshSubject(): Promise<string> {
    subject = `a${++counter}`;
    await engine.init({ subject });
    await engine.owner.setKey({ subject, publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
    return subject;
  }

  it('orders blocks by tier and records a manifest with a SHA-256 per block', async () => {
    await freshSubject();
    const s = await engine.sessions.create({ subject });
    const a = await engine.arrival.assemble({ surface: 'chat', sessionId: s.id });
    expect(a.blocks.map((b) => [b.name, b.tier])).toEqual([
      ['identity', 'static'],
      ['standing_rules', 'static'],
      ['capabilities', 'static'],
      ['live_facts', 'semi-stable'],
      ['recent_sessions', 'session'],
      ['open_tickets', 'session'],
      ['settled_facts', 'volatile'],
      ['current_time', 'volatile'],
    ]);
    for (const b of a.blocks) expect(b.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(block(a, 'open_tickets')).toBe('[Host] sessions on record: 1');
    expect(block(a, 'current_time')).toBe('[Now] 2026-10-22 10:00 (Thu) Europe/Stockholm');
    expect(a.text.indexOf('You are Luna')).toBeLessThan(a.text.indexOf('[Now]'));
    const rows = await engine.sql.query<{ blocks: unknown; tool_count: number }>(
      'SELECT blocks, tool_count FROM arrival_manifests WHERE id = $1',
      [a.manifestId],
    );
    expect(rows.rows).toHaveLength(1);
  });

  it('says how many commitments are open from a COUNT, and lists three', async () => {
    await freshSubject();
    for (let i = 1; i <= 6; i++)
      await engine.commitments.add({ subject, title: `commitment ${i}`, due: `2026-10-2${i}` });
    const closed = await engine.commitments.add({ subject, title: 'closed one' });
    await engine.commitments.done(closed.id);
    const a = await engine.arrival.assemble({ surface: 'chat', subject });
    const settled = block(a, 'settled_facts');
    expect(settled).toContain('Open commitments: 6 open; latest 3:');
    expect(settled.match(/"commitment \d"/g)).toHaveLength(3);
    expect(settled).not.toContain('closed one');
    expect(settled.split('\n').length).toBeLessThanOrEqual(8);
  });

  it('renders a DATE as written, whatever the zone', async () => {
    await freshSubject();
    await engine.commitments.add({ subject, title: 'file the report', due: '2026-10-22' });
    for (const zone of [
      'Europe/Stockholm',
      'America/Los_Angeles',
      'Pacific/Kiritimati',
      'Pacific/Pago_Pago',
    ]) {
      await engine.timeZone.set({ subject, zone });
      expect(
        block(await engine.arrival.assemble({ surface: 'chat', subject }), 'settled_facts'),
      ).toContain('(due 2026-10-22)');
    }
    expect(await engine.timeZone.get({ subject })).toBe('Pacific/Pago_Pago');
  });

  it('shows recent confirmed actions, retractions, due falsifiers and the pile', async () => {
    await freshSubject();
    const at = (h: number) => new Date(now.getTime() - h * HOUR);
    await engine.actions.record({
      subject,
      tool: 'send_email',
      surface: 'chat',
      target: 'invoice to Acme',
      completedAt: at(1),
    });
    await engine.actions.record({
      subject,
      tool: 'old_tool',
      surface: 'wake',
      target: 'too old',
      completedAt: at(49),
    });
    await engine.actions.record({
      subject,
      tool: 'failed_tool',
      surface: 'wake',
      target: 'failed',
      status: 'failed',
      completedAt: at(2),
    });
    await engine.actions.record({
      subject,
      tool: 'queued',
      surface: 'wake',
      target: 'pending',
      status: 'pending',
    });
    await engine.ledger.retract({
      subject,
      claim: 'The worker left no artifacts.',
      stoodOn: 'a summary',
      whyWrong: 'the file was there',
      corrected: 'The worker left a 17-byte artifact.',
      procedure: 'ls artifacts/',
      passObservation: 'probe.txt exists',
      overturnCondition: 'artifacts/ is empty',
      correctedAt: new Date(now.getTime() - 4 * 24 * HOUR),
    });
    const s = await engine.sessions.create({ subject });
    await engine.turns.add({ sessionId: s.id, role: 'user', content: 'Keep your answers short.' });
    await engine.propose({
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
      await engine.arrival.assemble({ surface: 'wake', sessionId: s.id }),
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

  it('never fails for a block that throws or hangs: fallbacks stand in, marked degraded, in the manifest', async () => {
    await freshSubject();
    engine.arrival.addBlock({
      name: 'broken',
      tier: 'session',
      fallback: '[broken] fallback',
      render: () => Promise.reject(new Error('boom')),
    });
    engine.arrival.addBlock({
      name: 'hangs',
      tier: 'volatile',
      timeoutMs: 200,
      fallback: '[hangs] fallback',
      render: () => new Promise<string>(() => undefined),
    });
    engine.arrival.addBlock({
      name: 'writes',
      tier: 'session',
      sql: `INSERT INTO subjects (id, created_at) VALUES ('intruder', now()) RETURNING id`,
      format: () => 'wrote',
    });
    const a = await engine.arrival.assemble({ surface: 'chat', subject });
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
    expect((await engine.sql.query(`SELECT id FROM subjects WHERE id = 'intruder'`)).rows).toEqual(
      [],
    );
    const m = await engine.sql.query<{ degraded: string[] }>(
      'SELECT degraded FROM arrival_manifests WHERE id = $1',
      [a.manifestId],
    );
    expect([...(m.rows[0]?.degraded ?? [])].sort()).toEqual(['broken', 'hangs', 'writes']);
  });

  it('binds the tools a surface declares, and diffs exactly a new tool and a superseded fact', async () => {
    const fresh = await openTestEngine(kind, { clock: () => now });
    try {
      const e = fresh.engine;
      await e.init();
      await e.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
      await e.tools.register({ name: 'web_search', surfaces: ['chat', 'wake'] });
      await e.tools.register({ name: 'send_email', surfaces: ['chat'] });
      const s = await e.sessions.create();
      await e.turns.add({ sessionId: s.id, role: 'user', content: 'I live in Lund.' });
      await e.turns.add({ sessionId: s.id, role: 'user', content: 'I moved to Malmö.' });
      const first = await e.propose({
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
      await e.decide({ proposalId: first.proposed[0]?.id ?? '', decision: 'approve', signer });

      const before = await e.arrival.assemble({ surface: 'wake' });
      expect(before.tools).toEqual(['web_search']);
      expect(block(before, 'capabilities')).toContain('web_search');
      expect(block(before, 'capabilities')).not.toContain('send_email');
      const chat = await e.arrival.assemble({ surface: 'chat' });
      expect(chat.tools).toEqual(['send_email', 'web_search']);

      await e.tools.register({ name: 'check_workers', surfaces: ['wake'] });
      const second = await e.propose({
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
      await e.decide({ proposalId: second.proposed[0]?.id ?? '', decision: 'approve', signer });

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
    const a = await engine.arrival.assemble({ surface: 'chat', subject });
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

describe('dates under the process zone [pglite]', () => {
  const CLI = resolve(import.meta.dirname, '../dist/cli/main.js');
  const run = (tz: string, db: string, args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args, '--db', db, '--json'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        TZ: tz,
        MEMLEDGER_OWNER_PASSPHRASE: 'pw',
        MEMLEDGER_OWNER_KEY: join(db, '..', `${tz.replace('/', '-')}.key`),
      },
    });

  it.each(['Europe/Stockholm', 'America/Los_Angeles'])(
    'renders due 2026-10-22 as 2026-10-22 under TZ=%s',
    (tz) => {
      const db = join(tmp, `tz-${tz.replace('/', '-')}`);
      expect(run(tz, db, ['init']).status).toBe(0);
      expect(
        run(tz, db, ['commitment', 'add', '--title', 'file the report', '--due', '2026-10-22'])
          .status,
      ).toBe(0);
      const list = JSON.parse(run(tz, db, ['commitment', 'list']).stdout) as {
        commitments: Array<{ due: string }>;
      };
      expect(list.commitments[0]?.due).toBe('2026-10-22');
      const out = run(tz, db, [
        'arrival',
        '--surface',
        'chat',
        '--subject',
        'owner',
        '--format',
        'json',
      ]);
      expect(out.status).toBe(0);
      const doc = JSON.parse(out.stdout) as { blocks: Array<{ name: string; text: string }> };
      expect(doc.blocks.find((b) => b.name === 'settled_facts')?.text).toContain(
        '"file the report" (due 2026-10-22)',
      );
      expect(doc.blocks.find((b) => b.name === 'current_time')?.text).toContain(tz);
    },
  );
});
