// A host's probe instrument was handed the store's writable client: one probe run could clear
// a subject's owner key or insert rows around the gate. Instruments now get a read-only reader.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createFileInstrument,
  generateOwnerKey,
  type ProbeInstrument,
  type ReadOnlySql,
} from '../../src/index.js';
import { storeClient } from '../../src/engine/test-access.js';
import { ENGINES, openTestEngine, type TestEngine } from '../support/engines.js';
import { tempDir } from '../support/probe-fixtures.js';
import { TEST_KEYS } from '../support/test-keys.js';

/** Each attempt the instrument makes, and whether the store refused it. */
const ATTEMPTS = [
  "UPDATE subjects SET owner_public_key = NULL, owner_key_id = NULL WHERE id = 'owner'",
  "INSERT INTO subjects (id, created_at) VALUES ('intruder', now())",
  "COMMIT; INSERT INTO subjects (id, created_at) VALUES ('intruder', now())",
  "SET TRANSACTION READ WRITE; INSERT INTO subjects (id, created_at) VALUES ('intruder', now())",
  'SET TRANSACTION READ WRITE',
  'SET search_path TO pg_catalog',
];

describe.each(ENGINES)("a host's instrument reads and never writes [%s]", (kind) => {
  let t: TestEngine;
  const tmp = tempDir('memledger-writer-');
  const seen: Array<{ attempt: string; refused: boolean }> = [];
  let reads = -1;
  const key = generateOwnerKey('pw', TEST_KEYS);

  const writer: ProbeInstrument = {
    name: 'writer',
    kind: 'file',
    async run(_spec, ctx) {
      const sql: ReadOnlySql = ctx.sql;
      for (const attempt of ATTEMPTS) {
        const refused = await sql.query(attempt).then(
          () => false,
          () => true,
        );
        seen.push({ attempt, refused });
      }
      const { rows } = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM subjects');
      reads = rows[0]?.n ?? -1;
      return { verdict: 'verified', errorCode: null, evidence: {} };
    },
    controls: (ctx) => createFileInstrument().controls(ctx),
  };

  beforeAll(async () => {
    t = await openTestEngine(kind, { probes: { roots: [tmp.dir], instruments: [writer] } });
    await t.engine.subjects.create();
    await t.engine.subject().owner.setKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('refuses every write and every escape from the read-only transaction, and changes nothing', async () => {
    const me = t.engine.subject();
    await me.probes.run({ kind: 'file', path: 'x', mode: 'exists' }, { instrument: 'writer' });
    const refused = seen.filter((s) => s.refused).map((s) => s.attempt);
    // SET search_path succeeds inside the transaction and is rolled back with it.
    expect(refused).toEqual(ATTEMPTS.filter((a) => !a.startsWith('SET search_path')));
    expect(reads).toBe(1);
    expect(await t.engine.subjects.list()).toEqual(['owner']);
    expect(await me.owner.key()).toEqual({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
    const { rows } = await storeClient(t.engine).query<{ path: string }>(
      'SELECT current_setting($1) AS path',
      ['search_path'],
    );
    expect(rows[0]?.path).not.toBe('pg_catalog');
  });
});
