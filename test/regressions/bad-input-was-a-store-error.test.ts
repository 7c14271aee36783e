// An evidence.turn of 2^31, a NUL in a text, quote, tool name or blocks file, a lone surrogate in a quote or a 5,000-deep proposal was STORE_ERROR and refused the whole batch; a 5 MB text was kept whole in the dropped log.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeClient } from '../../src/engine/test-access.js';
import { createEngine, type Engine } from '../../src/index.js';
import { runCliCaptured } from '../support/cli.js';
import { sharedEngines } from '../support/shared-engines.js';
import { dumpStore } from '../support/dump-store.js';
import {
  dropSchema,
  ENGINES,
  openTestEngine,
  pgUrlWithSchema,
  uniqueSchema,
  type TestEngine,
} from '../support/engines.js';
import { code } from '../support/errors.js';
import { unchecked } from '../support/unchecked.js';

const tmp = mkdtempSync(join(tmpdir(), 'memledger-bad-input-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

const USER_TURN = 'I love green tea and I live in Paris.';
const QUOTE = 'I love green tea';
const FIVE_MB = 'The user drinks tea. '.repeat(250_000);

/** A good item that waits in the pile; `n` keeps its text unique (no DUPLICATE). */
const good = (n: string) => ({
  slot: 'what_i_know_about_user',
  text: `The user loves green tea (${n})`,
  origin: 'saw',
  evidence: { turn: 1, quote: QUOTE },
});

const cyclic: Record<string, unknown> = { ...good('cycle') };
cyclic.self = cyclic;

/** Each bad item, with words its INVALID_PROPOSAL reason must say. */
const BAD: Array<[string, unknown, string]> = [
  [
    'evidence.turn 2147483648',
    { ...good('x'), evidence: { turn: 2147483648, quote: QUOTE } },
    'evidence.turn',
  ],
  ['a NUL in the text', { ...good('x'), text: 'The user loves\u0000 tea' }, 'text contains a NUL'],
  [
    'a NUL in the quote',
    { ...good('x'), evidence: { turn: 1, quote: 'I love\u0000' } },
    'evidence.quote contains a NUL',
  ],
  [
    'a NUL in the tool',
    { ...good('x'), evidence: { turn: 1, quote: QUOTE, tool: 'web\u0000' } },
    'evidence.tool contains a NUL',
  ],
  ['a NUL in the slot', { ...good('x'), slot: 'stances\u0000' }, 'slot contains a NUL'],
  ['a NUL in the key', { ...good('x'), key: 'k\u0000' }, 'key contains a NUL'],
  [
    'a lone high surrogate in the quote',
    { ...good('x'), evidence: { turn: 1, quote: 'I love \ud83d' } },
    'evidence.quote contains a lone surrogate',
  ],
  [
    'a lone low surrogate in the text',
    { ...good('x'), text: 'The user \ude00 loves tea' },
    'text contains a lone surrogate',
  ],
  ['a field nested 5,000 deep', { ...good('x'), extra: nested(5000) }, 'nests deeper than 32'],
  ['an item nested 5,000 deep', nested(5000), 'nests deeper than 32'],
  ['an item that refers to itself', cyclic, 'cycle'],
  ['an item holding a BigInt', { ...good('x'), confidence: 10n }, 'BigInt'],
  ['a 5 MB text', { ...good('x'), text: FIVE_MB }, 'longer than 2000'],
];

interface Logged {
  slot: string;
  text: string;
  reason: string;
  proposal: unknown;
  digest: {
    truncated: boolean;
    slot: { length: number; sha256: string };
    text: { length: number; sha256: string };
    proposal: { length: number; sha256: string | null; unencodable?: string };
  } | null;
}

describe.each(ENGINES)('bad input was a store error [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let sessionId = '';
  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
    await engine.subjects.create();
    const me = engine.subject();
    sessionId = (await me.sessions.create()).id;
    await me.turns.add({ sessionId, role: 'user', content: USER_TURN });
  });
  afterAll(() => t.close());

  it.each(BAD)(
    'drops %s with INVALID_PROPOSAL and stores the rest of the batch',
    async (name, bad, says) => {
      const me = engine.subject();
      const result = await me.gate.propose({
        sessionId,
        proposals: unchecked([good(`${name} before`), bad, good(`${name} after`)]),
      });
      expect(result.proposed.map((p) => [p.text, p.status])).toEqual([
        [`The user loves green tea (${name} before)`, 'proposed'],
        [`The user loves green tea (${name} after)`, 'proposed'],
      ]);
      expect(result.dropped).toHaveLength(1);
      expect(result.dropped[0]).toMatchObject({
        code: 'INVALID_PROPOSAL',
        reason: expect.stringContaining(says),
      });
      const [logged] = (await me.gate.dropped({ limit: 1 })) as unknown as Logged[];
      expect(logged?.reason).toContain(says);
      expect(logged?.digest).not.toBeNull();
      // What the log holds is bounded whatever arrived.
      expect(logged?.text.length).toBeLessThanOrEqual(2048);
      expect(JSON.stringify(logged?.proposal).length).toBeLessThan(64 * 1024);
    },
  );

  it('keeps a bounded prefix of a 5 MB text plus the SHA-256 of the whole', async () => {
    const me = engine.subject();
    const raw = { ...good('five'), text: FIVE_MB };
    await me.gate.propose({ sessionId, proposals: unchecked([raw]) });
    const [logged] = (await me.gate.dropped({ limit: 1 })) as unknown as Logged[];
    expect(logged?.text).toBe(FIVE_MB.slice(0, 2048));
    expect(logged?.digest).toMatchObject({
      truncated: true,
      text: { length: FIVE_MB.length, sha256: sha256(FIVE_MB) },
      slot: { length: raw.slot.length, sha256: sha256(raw.slot) },
      proposal: { length: JSON.stringify(raw).length, sha256: sha256(JSON.stringify(raw)) },
    });
    expect((logged?.proposal as { text: string }).text).toBe(FIVE_MB.slice(0, 2048));
    const { rows } = await storeClient(engine).query<{ n: number; biggest: number }>(
      `SELECT count(*)::int AS n, max(octet_length(text) + octet_length(proposal::text))::int AS biggest
       FROM dropped_proposals`,
    );
    expect(rows[0]?.n).toBeGreaterThan(1);
    expect(rows[0]?.biggest).toBeLessThan(64 * 1024);
  });

  it('hashes a 5,000-deep item in full, and says why a cyclic or BigInt item has no JSON', async () => {
    const me = engine.subject();
    await me.gate.propose({ sessionId, proposals: unchecked([nested(5000)]) });
    const [deep] = (await me.gate.dropped({ limit: 1 })) as unknown as Logged[];
    const json = '{"a":'.repeat(5000) + '{}' + '}'.repeat(5000);
    expect(deep?.digest?.proposal).toEqual({ length: json.length, sha256: sha256(json) });
    expect(JSON.stringify(deep?.proposal)).toContain('nested deeper than 8 levels');
    await me.gate.propose({ sessionId, proposals: unchecked([cyclic]) });
    const [cycle] = (await me.gate.dropped({ limit: 1 })) as unknown as Logged[];
    expect(cycle?.digest?.proposal).toMatchObject({
      sha256: null,
      unencodable: expect.stringContaining('cycle'),
    });
    expect(JSON.stringify(cycle?.proposal)).toContain('[cycle]');
    await me.gate.propose({ sessionId, proposals: unchecked([{ ...good('big'), n: 10n }]) });
    const [big] = (await me.gate.dropped({ limit: 1 })) as unknown as Logged[];
    expect(big?.digest?.proposal).toMatchObject({
      sha256: null,
      unencodable: expect.stringContaining('BigInt'),
    });
    expect(big?.proposal).toMatchObject({ n: '10n' });
  });

  it('logs a NUL or a lone surrogate as U+FFFD, with the digest of what arrived', async () => {
    const me = engine.subject();
    const text = 'tea\u0000 and \ud800';
    await me.gate.propose({ sessionId, proposals: unchecked([{ ...good('nul'), text }]) });
    const [logged] = (await me.gate.dropped({ limit: 1 })) as unknown as Logged[];
    expect(logged?.text).toBe('tea\uFFFD and \uFFFD');
    // WTF-8: the lone surrogate U+D800 is the bytes ED A0 80.
    const bytes = Buffer.concat([
      Buffer.from('tea\u0000 and ', 'utf8'),
      Buffer.from([0xed, 0xa0, 0x80]),
    ]);
    expect(logged?.digest?.text).toEqual({
      length: text.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(logged?.digest?.truncated).toBe(true);
  });

  it('refuses a turn with a NUL or a lone surrogate, or a tool name with a NUL, changing nothing', async () => {
    const me = engine.subject();
    const before = await dumpStore(engine);
    const refused: Array<() => Promise<unknown>> = [
      () => me.turns.add({ sessionId, role: 'user', content: 'a\u0000b' }),
      () => me.turns.add({ sessionId, role: 'user', content: 'half a pair \ud83d' }),
      () =>
        me.turns.add({
          sessionId,
          role: 'assistant',
          content: 'ok',
          receipt: { tools: ['web\u0000'] },
        }),
      () =>
        me.turns.add({
          sessionId,
          role: 'assistant',
          content: 'ok',
          receipt: { tools: ['web'], sources: ['\udfff'] },
        }),
      () => me.turns.add({ sessionId, role: 'user', content: 'hi', speaker: 'Ann\u0000' }),
      () => me.turns.recordResponse({ sessionId, blocks: [{ type: 'text', text: 'a\u0000b' }] }),
      () =>
        me.turns.recordResponse({
          sessionId,
          blocks: [
            { type: 'tool_use', name: 'search\u0000' },
            { type: 'text', text: 'done' },
          ],
        }),
    ];
    for (const call of refused) expect(await code(call())).toBe('INVALID_ARGUMENT');
    expect(await dumpStore(engine)).toEqual(before);
    // negative control: the same calls with clean text are recorded, and the dump sees it
    await me.turns.add({ sessionId, role: 'user', content: 'ab' });
    expect(await dumpStore(engine)).not.toEqual(before);
  });
});

describe.each(ENGINES)(
  'a NUL in a blocks file or a proposals file, through the CLI [%s]',
  (kind) => {
    const schema = uniqueSchema();
    const db = kind === 'pglite' ? join(tmp, `store-${kind}`) : pgUrlWithSchema(schema);
    let sessionId = '';
    // commands share one kept engine on the store, as a long-running host does
    const engines = sharedEngines();
    const cli = (...args: string[]) =>
      runCliCaptured([...args, '--db', db, '--json'], {}, { engines });
    let engine: Engine;
    const dump = () => dumpStore(engine);
    beforeAll(async () => {
      engine = await createEngine({ db });
      await engine.subjects.create();
      const me = engine.subject();
      sessionId = (await me.sessions.create()).id;
      await me.turns.add({ sessionId, role: 'user', content: USER_TURN });
      await engine.close();
      await cli('session', 'list'); // the commands' engine, which the dumps read
      const kept = engines.engineFor(db);
      if (kept === undefined) throw new Error('the CLI kept no engine');
      engine = kept;
    });
    afterAll(async () => {
      await engines.close();
      if (kind === 'postgres') await dropSchema(schema);
    });

    it('refuses the blocks with INVALID_ARGUMENT (exit 2) and changes nothing', async () => {
      const files = {
        text: JSON.stringify([{ type: 'text', text: 'It is done.\u0000' }]),
        tool: JSON.stringify([
          { type: 'tool_use', name: 'shell\u0000' },
          { type: 'text', text: 'ok' },
        ]),
        raw: '[{"type":"text","text":"a\u0000b"}]',
      };
      const before = await dump();
      for (const [name, body] of Object.entries(files)) {
        const file = join(tmp, `${kind}-${name}.json`);
        writeFileSync(file, body);
        const r = await cli('turn', 'add', '--session', sessionId, '--blocks-file', file);
        expect({ name, code: r.code, error: r.errorCode() }).toEqual({
          name,
          code: 2,
          error: 'INVALID_ARGUMENT',
        });
      }
      expect(await dump()).toEqual(before);
    });

    it('drops the bad proposal of a file and stores the good ones', async () => {
      const file = join(tmp, `${kind}-proposals.json`);
      writeFileSync(
        file,
        JSON.stringify([
          good('cli 1'),
          { ...good('cli bad'), evidence: { turn: 1, quote: 'I\u0000' } },
          good('cli 2'),
        ]),
      );
      const r = await cli('propose', '--session', sessionId, '--file', file);
      expect(r.code).toBe(0);
      const out = r.json() as { proposed: unknown[]; dropped: Array<{ code: string }> };
      expect(out.proposed).toHaveLength(2);
      expect(out.dropped.map((d) => d.code)).toEqual(['INVALID_PROPOSAL']);
    });
  },
);
