// Issue 37, items 1 and 2: a subject exported and imported answers every read as the original,
// on both engines and across them (PGlite → PostgreSQL → PGlite), and exporting the import gives
// the same bytes. An export that was changed (a byte of any kind, a removed or reordered decision,
// a decision re-signed with another key, a chain cut before the owner's recorded head, a fact
// whose content its signature does not cover) is refused with its code and the target store is
// left as it was (dump compared). Real engines; the LLM and embeddings are fakes over HTTP.
import { createHash } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  cpSync,
  mkdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEngine,
  createLlmClient,
  restoreBackup,
  generateOwnerKey,
  keyFileAnchor,
  loadOwnerKey,
  openAiEmbedder,
  recordKeyFileHead,
  writeOwnerKeyFile,
  type Engine,
  type EngineConfig,
  type OwnerSigner,
} from '../src/index.js';
import { nodeChainCrypto } from '../src/crypto/chain-crypto.js';
import { decisionPayload, type DecisionLink } from '../src/domain/decision-chain.js';
import { EXPORT_KINDS } from '../src/domain/export-format.js';
import { storeClient } from '../src/engine/test-access.js';
import { startFakeLlm, type FakeLlm } from '../eval/fake-llm/fake-llm-server.js';
import { dumpStore } from './support/dump-store.js';
import { testStore, type EngineKind, type TestStore } from './support/engines.js';
import { code } from './support/errors.js';
import { startFakeEmbeddings, type FakeEmbeddings } from './support/fake-embeddings.js';
import { buildRichSubject, type RichSubject } from './support/rich-subject.js';
import { TEST_KEYS } from './support/test-keys.js';

const SUBJECT = 'carol';
const root = mkdtempSync(join(tmpdir(), 'ml-export-'));
const probeDir = join(root, 'probes');
mkdirSync(probeDir);
const keyFile = join(root, 'owner.key');
writeOwnerKeyFile(keyFile, generateOwnerKey('pw', TEST_KEYS).keyFile);
const signer: OwnerSigner = loadOwnerKey(keyFile, 'pw', TEST_KEYS);
const otherKeyFile = join(root, 'other.key');
writeOwnerKeyFile(otherKeyFile, generateOwnerKey('pw', TEST_KEYS).keyFile);
const other: OwnerSigner = loadOwnerKey(otherKeyFile, 'pw', TEST_KEYS);

let now = new Date('2026-11-02T09:00:00Z');
let fake: FakeLlm;
let embeddings: FakeEmbeddings;
const stores: TestStore[] = [];
const engines: Engine[] = [];

beforeAll(async () => {
  fake = await startFakeLlm({ protocol: 'openai', apiKey: 'sk-test', script: [] });
  embeddings = await startFakeEmbeddings();
});
afterAll(async () => {
  for (const e of engines) await e.close();
  for (const s of stores) await s.cleanup();
  await fake.close();
  await embeddings.close();
  rmSync(root, { recursive: true, force: true });
});

/** The owner's process's engine config: the fakes, the probe root, the key file's anchor. */
const config = (): Omit<EngineConfig, 'db'> => ({
  clock: () => now,
  probes: { roots: [probeDir] },
  embedder: openAiEmbedder({ baseUrl: embeddings.baseUrl, model: 'fake-concepts' }),
  llm: createLlmClient({
    provider: 'openai',
    baseUrl: fake.url,
    model: 'fake-1',
    apiKey: 'sk-test',
    retries: 0,
    timeoutMs: 5000,
  }),
  anchor: (id) => (id === SUBJECT ? keyFileAnchor(keyFile, id) : null),
});

/**
 * A new store of the kind, and an engine on it as the owner's process opens it: an embedded one
 * in memory, or, `reopened`, in a directory that another engine opens after this one closes.
 */
async function open(kind: EngineKind, { reopened = false } = {}): Promise<Engine> {
  const store = testStore(kind, reopened ? root : undefined);
  stores.push(store);
  const engine = await createEngine({ ...config(), db: store.db });
  engines.push(engine);
  return engine;
}

interface RichSource {
  engine: Engine;
  rich: RichSubject;
  /** Its export with vectors, made as soon as the subject was built. */
  first: string;
}

const sources = new Map<EngineKind, Promise<RichSource>>();

/**
 * The rich subject on a store of the kind, built once for this file: every describe that reads
 * it reads the one store (each says what it adds to it, and compares with what is there then).
 */
function richSource(kind: EngineKind): Promise<RichSource> {
  let source = sources.get(kind);
  if (source === undefined) {
    source = (async () => {
      now = new Date('2026-11-02T09:00:00Z');
      const engine = await open(kind);
      await engine.subjects.create(SUBJECT);
      const rich = await buildRichSubject(engine.subject(SUBJECT), signer, probeDir, (ms) => {
        now = new Date(now.getTime() + ms);
      });
      return { engine, rich, first: await exportOf(engine, true) };
    })();
    sources.set(kind, source);
  }
  return source;
}

let exports = 0;
const exportOf = async (engine: Engine, withVectors = false): Promise<string> => {
  const out = join(root, `export-${++exports}`);
  await engine.subjects.export(SUBJECT, out, { withVectors });
  return out;
};

/** Every file of an export folder, by name. */
const filesOf = (dir: string): Record<string, string> =>
  Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));

/** Every read a face makes of the subject, as data. */
async function reads(engine: Engine, rich: RichSubject): Promise<Record<string, unknown>> {
  const me = engine.subject(SUBJECT);
  const history: Record<string, unknown> = {};
  for (const s of rich.sessions) {
    history[s] = {
      text: await me.history.render(s),
      messages: await me.history.messages(s),
      turns: await me.history.turns(s),
      usage: await me.history.usage(s),
    };
  }
  const recall: Record<string, unknown> = {};
  for (const q of rich.queries) {
    recall[q] = (await me.recall.search(q, { k: 10, includeHistory: true })).map((i) => [
      i.kind,
      i.id,
      i.score,
      i.passport,
    ]);
  }
  return {
    sessions: await me.sessions.list(),
    history,
    live: await me.facts.live(),
    all: await me.facts.all(),
    integrity: await me.facts.integrity(),
    pile: await me.gate.pile(),
    dropped: await me.gate.dropped(),
    ledger: await me.ledger.list(),
    probeLog: await me.probes.log(),
    commitments: await me.commitments.list(),
    tools: await me.tools.list(),
    manifests: await me.arrival.manifests(),
    reflections: await me.reflection.list(),
    summaries: await me.summaries.list(),
    forgetRequests: await me.gate.forgetRequests(),
    policy: await me.owner.forgetPolicy(),
    tokens: await me.owner.tokens(),
    slots: await me.slots.list(),
    timeZone: await me.arrival.timeZone(),
    recall,
    chain: await me.owner.verifyChain(),
  };
}

/** What an arrival shows, without its manifest's id (each arrival records a new one). */
async function arrivalOf(engine: Engine, rich: RichSubject) {
  const a = await engine.subject(SUBJECT).arrival.assemble({
    surface: 'chat',
    sessionId: rich.sessions[0]!,
    message: 'Where do I live?',
  });
  const m = (await engine.subject(SUBJECT).arrival.manifests({ limit: 1 })).manifests[0]!;
  return { text: a.text, blocks: a.blocks, digests: m.blocks.map((b) => [b.name, b.sha256]) };
}

/** The subject's rows in every table but the store's own, as a dump compares them. */
async function subjectTables(engine: Engine): Promise<Record<string, string>> {
  const dump = await dumpStore(engine);
  delete dump.store_meta;
  delete dump.schema_migrations;
  // calibrations: an imported one is marked so and takes the next place in this store's order
  const { rows } = await storeClient(engine).query<{ d: string }>(
    `SELECT md5(string_agg(row_to_json(c)::text, E'\\n' ORDER BY id)) AS d FROM (
       SELECT id, instrument, kind, fingerprint, passed, positive_verdict, negative_verdict, detail,
         ran_at FROM probe_calibrations) c`,
  );
  dump.probe_calibrations = rows[0]!.d;
  return dump;
}

/** Rewrites a kind's file and its manifest entry (digest, bytes, rows): a careful forger's copy. */
function rewrite(dir: string, kind: string, lines: (rows: string[]) => string[]): void {
  const file = join(dir, `${kind}.jsonl`);
  const text = `${lines(readFileSync(file, 'utf8').slice(0, -1).split('\n')).join('\n')}\n`;
  writeFileSync(file, text);
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    files: Array<{ kind: string; rows: number; bytes: number; sha256: string }>;
    chain: { length: number; head: string | null };
  };
  const entry = m.files.find((f) => f.kind === kind)!;
  entry.rows = text.split('\n').length - 1;
  entry.bytes = Buffer.byteLength(text);
  entry.sha256 = createHash('sha256').update(text).digest('hex');
  if (kind === 'decisions' && m.chain !== undefined) {
    const last = JSON.parse(text.slice(0, -1).split('\n').at(-1)!) as {
      seq: number;
      hash: string;
    };
    m.chain.length = entry.rows;
    m.chain.head = last.hash;
  }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(m, null, 2));
}

describe.each<[string, EngineKind, EngineKind[]]>([
  ['PGlite → PostgreSQL → PGlite [pglite]', 'pglite', ['postgres', 'pglite']],
  ['PostgreSQL → PostgreSQL [postgres]', 'postgres', ['postgres']],
])('a subject carried %s', (_name, from, hops) => {
  let source: Engine;
  let rich: RichSubject;
  let first: string;

  beforeAll(async () => {
    ({ engine: source, rich, first } = await richSource(from));
  });

  it('holds a record of every kind, and every table of a subject is a kind or made from one', async () => {
    const m = JSON.parse(readFileSync(join(first, 'manifest.json'), 'utf8')) as {
      files: Array<{ kind: string; rows: number }>;
    };
    for (const f of m.files) expect([f.kind, f.rows > 0]).toEqual([f.kind, true]);
    const { rows } = await storeClient(source).query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables
       WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    // made again on import from the turns (the recall index), or the store's own
    const notKinds = [
      'turn_postings',
      'term_stats',
      'session_terms',
      'recall_corpus',
      'recall_index',
      'store_meta',
      'schema_migrations',
    ];
    expect(rows.map((r) => r.t).sort()).toEqual(
      [...EXPORT_KINDS.map((k) => k.name), ...notKinds].sort(),
    );
    // no secret: the owner's private key and the tokens' secrets are nowhere in it
    const all = Object.values(filesOf(first)).join('\n');
    expect(all).not.toMatch(/PRIVATE KEY|mlt_[A-Za-z0-9]{20,}/);
  });

  it('imports into a fresh store on each hop and answers every read as the original did', async () => {
    const expected = await reads(source, rich);
    const expectedTables = await subjectTables(source);
    const expectedArrival = await arrivalOf(source, rich);
    let from = first;
    for (const kind of hops) {
      const target = await open(kind);
      const done = await target.subjects.import(from);
      expect(done.subject).toBe(SUBJECT);
      expect(await reads(target, rich)).toEqual(expected);
      expect(await subjectTables(target)).toEqual(expectedTables);
      // exporting the import gives the same files, byte for byte
      const again = await exportOf(target, true);
      expect(filesOf(again)).toEqual(filesOf(first));
      expect(await arrivalOf(target, rich)).toEqual(expectedArrival);
      from = again;
    }
    expect((expected.chain as { ok: boolean }).ok).toBe(true);
  });

  it('goes on as a store of its own: new turns, decisions and arrivals follow the imported ones', async () => {
    const target = await open(hops[0]!);
    await target.subjects.import(first);
    const me = target.subject(SUBJECT);
    const s = rich.sessions[1]!;
    const added = await me.turns.add({
      sessionId: s,
      role: 'user',
      content: 'I also grow chillies.',
    });
    expect(added.recorded && added.turn.seq).toBe(3);
    const p = await me.gate.propose({
      sessionId: s,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user grows chillies.',
          origin: 'saw',
          evidence: { turn: 3, quote: 'I also grow chillies' },
        },
      ],
    });
    await me.owner.decide({ proposalId: p.proposed[0]!.id, decision: 'approve', signer });
    expect((await me.facts.live()).map((f) => f.text)).toContain('The user grows chillies.');
    expect(await me.owner.verifyChain()).toMatchObject({ ok: true });
    const before = (await me.arrival.manifests({ limit: 1 })).manifests[0]!;
    await me.arrival.assemble({ surface: 'wake' });
    const after = (await me.arrival.manifests({ limit: 1 })).manifests[0]!;
    expect(after.id).not.toBe(before.id);
    // a probe run here is never trusted on a calibration that came with the import
    expect(await me.probes.isCalibrated('file')).toBe(false);
  });

  it('refuses a subject that holds records here, and another subject name', async () => {
    const target = await open(hops[0]!);
    await target.subjects.import(first);
    const dump = await dumpStore(target);
    expect(await code(target.subjects.import(first))).toBe('SUBJECT_NOT_EMPTY');
    expect(await code(target.subjects.import(first, { subject: 'dave' }))).toBe('INVALID_ARGUMENT');
    expect(await dumpStore(target)).toEqual(dump);
  });
});

describe('a changed export is refused, and the store is left as it was [pglite]', () => {
  let source: Engine;
  let target: Engine;
  let original: string;
  let dump: Record<string, string>;
  let tampered = 0;

  beforeAll(async () => {
    // the export made as the subject was built (the store has had reads and an arrival since)
    ({ engine: source, first: original } = await richSource('pglite'));
    target = await open('pglite');
    // the target holds another subject, whose rows must not move either
    await target.subjects.create('dave');
    await target.subject('dave').sessions.create({ id: 'x' });
    dump = await dumpStore(target);
  });

  /** A copy of the export, changed by `change` (the manifest's digests kept unless `redigest`). */
  function copy(change: (dir: string) => void): string {
    const dir = join(root, `tampered-${++tampered}`);
    cpSync(original, dir, { recursive: true });
    change(dir);
    return dir;
  }

  async function refused(dir: string): Promise<{ code: string; data: unknown }> {
    const err = (await target.subjects.import(dir).then(
      () => null,
      (e: unknown) => e,
    )) as { code: string; data: unknown } | null;
    expect(err).not.toBeNull();
    expect(await dumpStore(target)).toEqual(dump);
    return { code: err!.code, data: err!.data };
  }

  it('one changed byte in the file of each kind: EXPORT_DIGEST_MISMATCH naming the file', async () => {
    const kinds = EXPORT_KINDS.map((k) => k.name);
    for (const kind of kinds) {
      const dir = copy((d) => {
        const f = join(d, `${kind}.jsonl`);
        const bytes = readFileSync(f);
        const at = bytes.indexOf(':') + 2; // the first value's first byte
        bytes[at] = bytes[at]! ^ 0x01;
        writeFileSync(f, bytes);
      });
      expect(await refused(dir)).toEqual({
        code: 'EXPORT_DIGEST_MISMATCH',
        data: { file: `${kind}.jsonl` },
      });
    }
  });

  it('a changed manifest, a missing file, and a row of another subject', async () => {
    const digest = copy((d) => {
      const m = readFileSync(join(d, 'manifest.json'), 'utf8');
      writeFileSync(
        join(d, 'manifest.json'),
        m.replace(/"sha256": "(.)/, (_, c: string) => `"sha256": "${c === 'a' ? 'b' : 'a'}`),
      );
    });
    expect((await refused(digest)).code).toBe('EXPORT_DIGEST_MISMATCH');
    const missing = copy((d) => rmSync(join(d, 'facts.jsonl')));
    expect((await refused(missing)).code).toBe('EXPORT_UNREADABLE');
    const notJson = copy((d) => writeFileSync(join(d, 'manifest.json'), '{"format":'));
    expect((await refused(notJson)).code).toBe('EXPORT_UNREADABLE');
    const foreign = copy((d) =>
      rewrite(d, 'commitments', (rows) =>
        rows.map((r) => r.replace(`"subject_id":"${SUBJECT}"`, '"subject_id":"dave"')),
      ),
    );
    expect((await refused(foreign)).code).toBe('EXPORT_INVALID');
  });

  it('a removed decision, a reordered chain, a decision re-signed with another key: CHAIN_BROKEN', async () => {
    const removed = copy((d) => rewrite(d, 'decisions', (rows) => rows.filter((_, i) => i !== 2)));
    expect(await refused(removed)).toMatchObject({ code: 'CHAIN_BROKEN', data: { seq: 4 } });
    const reordered = copy((d) =>
      rewrite(d, 'decisions', (rows) => [rows[0]!, rows[2]!, rows[1]!, ...rows.slice(3)]),
    );
    expect(await refused(reordered)).toMatchObject({ code: 'CHAIN_BROKEN', data: { seq: 3 } });
    const resigned = copy((d) =>
      rewrite(d, 'decisions', (rows) =>
        rows.map((r, i) => {
          if (i !== 1) return r;
          const row = JSON.parse(r) as Record<string, unknown>;
          const link = {
            subjectId: row.subject_id,
            seq: row.seq,
            prevHash: row.prev_hash,
            proposalId: row.proposal_id,
            contentHash: row.content_hash,
            decision: row.decision,
            decidedAt: row.decided_at,
            note: row.note,
            keyId: other.keyId,
            format: row.format,
          } as DecisionLink;
          const payload = decisionPayload(link);
          return JSON.stringify({
            ...row,
            key_id: other.keyId,
            hash: nodeChainCrypto.sha256Hex(payload),
            signature: other.sign(payload),
          });
        }),
      ),
    );
    expect(await refused(resigned)).toMatchObject({
      code: 'CHAIN_BROKEN',
      data: { seq: 2, code: 'KEY_MISMATCH' },
    });
  });

  it("a whole chain signed by another key, under another owner key: WRONG_KEY (the owner's key file)", async () => {
    const swapped = copy((d) =>
      rewrite(d, 'subjects', (rows) =>
        rows.map((r) => {
          const row = JSON.parse(r) as Record<string, unknown>;
          return JSON.stringify({
            ...row,
            owner_public_key: other.publicKeyPem,
            owner_key_id: other.keyId,
          });
        }),
      ),
    );
    const m = JSON.parse(readFileSync(join(swapped, 'manifest.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    writeFileSync(
      join(swapped, 'manifest.json'),
      JSON.stringify({ ...m, ownerKeyId: other.keyId }),
    );
    expect((await refused(swapped)).code).toBe('WRONG_KEY');
  });

  it("a chain cut before the head the owner's head file records: CHAIN_BROKEN (HEAD_CUT)", async () => {
    const links = readFileSync(join(original, 'decisions.jsonl'), 'utf8').slice(0, -1).split('\n');
    const last = JSON.parse(links.at(-1)!) as { seq: number; hash: string };
    const root = (JSON.parse(links[0]!) as { hash: string }).hash;
    recordKeyFileHead(keyFile, source.storeId, SUBJECT, { seq: last.seq, hash: last.hash, root });
    try {
      const cut = copy((d) => rewrite(d, 'decisions', (rows) => rows.slice(0, -1)));
      expect(await refused(cut)).toMatchObject({
        code: 'CHAIN_BROKEN',
        data: { code: 'HEAD_CUT' },
      });
    } finally {
      // every fixture's chain begins with the same link (same key, clock and delegation), which
      // names the chain: the head recorded here would be every later fixture's too
      rmSync(`${keyFile}.heads.json`, { force: true });
    }
  });

  it('a fact whose text its signed decision does not cover: refused before the commit', async () => {
    const changed = copy((d) =>
      rewrite(d, 'facts', (rows) =>
        rows.map((r) =>
          r.replace(
            'The user is moving to Porto next month.',
            'The user is moving to Braga next month.',
          ),
        ),
      ),
    );
    expect(await refused(changed)).toMatchObject({
      code: 'CHAIN_BROKEN',
      data: { code: 'CONTENT_CHANGED' },
    });
  });

  it('an export as one tar file imports as its folder does; a damaged or hostile archive is refused', async () => {
    const tar = join(root, 'carol.tar');
    await source.subjects.export(SUBJECT, tar, { withVectors: true });
    // the same bytes inside: the archive holds the files of the folder exported beside it
    const folder = await exportOf(source, true);
    const fresh = await open('pglite');
    const done = await fresh.subjects.import(tar);
    const again = join(root, 'carol-again');
    await fresh.subjects.export(SUBJECT, again, { withVectors: true });
    expect(filesOf(again)).toEqual(filesOf(folder));
    expect(done.subject).toBe(SUBJECT);

    const bytes = readFileSync(tar);
    const badSum = Buffer.from(bytes);
    badSum[0] = badSum[0]! ^ 0x01; // a byte of the first header's name: its checksum no longer holds
    writeFileSync(join(root, 'bad-sum.tar'), badSum);
    expect(await refused(join(root, 'bad-sum.tar'))).toMatchObject({ code: 'EXPORT_UNREADABLE' });
    // a member named out of its folder, its checksum made right: never written
    const escape = Buffer.from(bytes);
    escape.write('../../escape.jsonl\0', 0, 'utf8');
    escape.write('        ', 148, 'ascii');
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += escape[i]!;
    escape.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    writeFileSync(join(root, 'escape.tar'), escape);
    expect(await refused(join(root, 'escape.tar'))).toMatchObject({ code: 'EXPORT_UNREADABLE' });
    expect(readdirSync(join(root, '..')).filter((f) => f === 'escape.jsonl')).toEqual([]);
    writeFileSync(join(root, 'not-a-tar.tar'), 'hello');
    expect(await refused(join(root, 'not-a-tar.tar'))).toMatchObject({ code: 'EXPORT_UNREADABLE' });
  });

  it("a row carrying the store's own order (seq) is refused, and no sequence moves to what it says", async () => {
    const seqs = async () =>
      (
        await storeClient(target).query<{ a: string | null; p: string | null }>(
          `SELECT pg_sequence_last_value(pg_get_serial_sequence('arrival_manifests', 'seq'))::text AS a,
                  pg_sequence_last_value(pg_get_serial_sequence('probe_records', 'seq'))::text AS p`,
        )
      ).rows[0];
    const before = await seqs();
    const hostile = copy((d) => {
      rewrite(d, 'arrival_manifests', (rows) =>
        rows.map((r) => r.replace('{', '{"seq":9223372036854775000,')),
      );
      const m = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8')) as {
        files: Array<{ kind: string; columns: string[] }>;
      };
      m.files.find((f) => f.kind === 'arrival_manifests')!.columns.unshift('seq');
      writeFileSync(join(d, 'manifest.json'), JSON.stringify(m));
    });
    expect(await refused(hostile)).toMatchObject({
      code: 'EXPORT_INVALID',
      data: { file: 'arrival_manifests.jsonl' },
    });
    expect(await seqs()).toEqual(before);
  });

  it('the untouched export imports into the same store afterwards', async () => {
    const done = await target.subjects.import(original);
    expect(done.rows.turns).toBeGreaterThan(0);
    expect(await target.subject(SUBJECT).owner.verifyChain()).toMatchObject({ ok: true });
  });
});

describe('a store backed up while in use, and restored [pglite]', () => {
  let source: Engine;
  let rich: RichSubject;
  let backup: string;
  let secret: string;

  beforeAll(async () => {
    ({ engine: source, rich } = await richSource('pglite'));
    await source.subjects.create('dave');
    await source.subject('dave').sessions.create({ id: 'x' });
    secret = (await source.subject(SUBJECT).owner.createToken({ role: 'agent', signer })).token;
    backup = join(root, 'backup-1');
    const done = await source.backup(backup);
    expect(done.manifest.storeId).toBe(source.storeId);
  });

  it.each<EngineKind>(['pglite', 'postgres'])(
    'restores into a new %s store: the same identity, every table, every read',
    async (kind) => {
      const store = testStore(kind, root);
      stores.push(store);
      const restored = await restoreBackup({
        from: backup,
        db: store.db,
        anchor: config().anchor!,
      });
      expect(restored).toMatchObject({ storeId: source.storeId, subjects: ['carol', 'dave'] });
      const engine = await createEngine({ ...config(), db: store.db });
      engines.push(engine);
      expect(engine.storeId).toBe(source.storeId);
      const mine = await dumpStore(engine);
      const theirs = await dumpStore(source);
      delete mine.schema_migrations;
      delete theirs.schema_migrations;
      expect(mine).toEqual(theirs);
      expect(await reads(engine, rich)).toEqual(await reads(source, rich));
      // the same identity: a token made there authenticates here
      expect(await engine.tokens.authenticate(secret)).toMatchObject({ subject: SUBJECT });
    },
  );

  it("an export's tokens are listed in another store, and none authenticates there", async () => {
    const out = join(root, 'with-token');
    await source.subjects.export(SUBJECT, out);
    const other = await open('pglite');
    await other.subjects.import(out);
    expect((await other.subject(SUBJECT).owner.tokens()).length).toBeGreaterThan(0);
    expect(await code(other.tokens.authenticate(secret))).toBe('TOKEN_INVALID');
    // and in the store it was made in, it does
    expect(await source.tokens.authenticate(secret)).toMatchObject({ subject: SUBJECT });
  });

  it('refuses a used store, and a backup with a changed byte, writing nothing', async () => {
    const used = await open('pglite', { reopened: true });
    const before = await dumpStore(used);
    await used.close();
    const usedDb = stores.at(-1)!.db;
    expect(await code(restoreBackup({ from: backup, db: usedDb }))).toBe('STORE_NOT_EMPTY');
    const changed = join(root, 'backup-changed');
    cpSync(backup, changed, { recursive: true });
    const f = join(changed, 'turns.jsonl');
    const bytes = readFileSync(f);
    bytes[10] = bytes[10]! ^ 0x01;
    writeFileSync(f, bytes);
    const fresh = testStore('pglite', root);
    stores.push(fresh);
    expect(await code(restoreBackup({ from: changed, db: fresh.db }))).toBe(
      'EXPORT_DIGEST_MISMATCH',
    );
    // a forger's backup: a decision's note changed, the digests made again
    const forged = join(root, 'backup-forged');
    cpSync(backup, forged, { recursive: true });
    rewrite(forged, 'decisions', (rows) =>
      rows.map((r, i) => (i === 1 ? r.replace('"note":"', '"note":"forged ') : r)),
    );
    const blank = testStore('pglite', root);
    stores.push(blank);
    expect(await code(restoreBackup({ from: forged, db: blank.db }))).toBe('CHAIN_BROKEN');
    const untouched = await createEngine({ db: blank.db });
    engines.push(untouched);
    expect(await untouched.subjects.list()).toEqual([]);
    const again = await createEngine({ db: usedDb });
    engines.push(again);
    expect(await dumpStore(again)).toEqual(before);
  });
});

describe('no token reaches an export, an import or a backup', () => {
  it('no operation of any face exports, imports, backs up, restores or moves', async () => {
    const { OPERATION_TABLE } = await import('../server/operations/table.js');
    const faces = OPERATION_TABLE.flatMap((op) => [
      op.name,
      'http' in op ? op.http.path : '',
      ...('mcp' in op && 'tools' in op.mcp ? op.mcp.tools : []),
    ]);
    expect(faces.length).toBeGreaterThan(20);
    expect(faces.filter((f) => /export|import|backup|restore|move/i.test(f))).toEqual([]);
  });
});
