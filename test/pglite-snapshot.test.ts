// PGlite's snapshot (what SQL probes run on there): a copy of what is committed, in a worker
// thread, that close() stops mid-statement; and boundedSql, the reader probes get, over it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteClient } from '../src/pglite/pglite-client.js';
import { boundedSql } from '../src/store/bounded-sql.js';
import type { SqlClient } from '../src/store/sql-client.js';
import { ONE_ENGINE } from './support/engines.js';
import { emptyTemplate } from './support/store-template.js';

const ENDLESS = 'SELECT count(*)::int AS n FROM generate_series(1, 1000000000)';

describe.each(ONE_ENGINE)('a snapshot of the embedded store [%s]', () => {
  let store: PgliteClient;
  beforeAll(async () => {
    // no migrations, as from initdb, but started from the run's dump of such a store
    store = await PgliteClient.open({
      location: 'memory://',
      create: true,
      template: emptyTemplate(),
    });
    await store.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (1), (2)');
  });
  afterAll(() => store.close());

  const count = async (client: SqlClient) =>
    (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM kept')).rows[0]?.n;

  it('holds what was committed when it was taken, and nothing written after', async () => {
    let copy: SqlClient | undefined;
    await store.transaction(async (tx) => {
      await tx.query('INSERT INTO kept VALUES (3)');
      copy = await store.snapshot();
    });
    try {
      expect(await count(copy as SqlClient)).toBe(2);
      await store.query('INSERT INTO kept VALUES (4)');
      expect(await count(copy as SqlClient)).toBe(2);
      // a write to the copy stays in the copy
      await (copy as SqlClient).query('DELETE FROM kept');
      expect(await count(copy as SqlClient)).toBe(0);
    } finally {
      await copy?.close();
    }
    expect(await count(store)).toBe(4);
    // A snapshot taken now has all four (control).
    const later = await store.snapshot();
    try {
      expect(await count(later)).toBe(4);
    } finally {
      await later.close();
    }
  });

  it('stops a statement at once when closed, and then answers nothing', async () => {
    const copy = await store.snapshot();
    const running = copy.query(ENDLESS);
    running.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closing = performance.now();
    await copy.close();
    await expect(running).rejects.toMatchObject({ code: 'DB_UNUSABLE' });
    expect(performance.now() - closing).toBeLessThan(1000);
    await expect(copy.query('SELECT 1')).rejects.toMatchObject({ code: 'DB_UNUSABLE' });
    // The store itself was never held up.
    expect(await count(store)).toBe(4);
  });

  it('gives boundedSql a statement_timeout that holds, with the database errors as they are', async () => {
    const reader = boundedSql(store);
    const started = performance.now();
    await expect(reader.query(ENDLESS, [], { timeoutMs: 200 })).rejects.toMatchObject({
      code: '57014',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    await expect(reader.query('SELECT * FROM no_such_table')).rejects.toMatchObject({
      code: '42P01',
    });
    await expect(reader.query('INSERT INTO kept VALUES (5)')).rejects.toMatchObject({
      code: '25006',
    });
    // Within the limit, the answer (control).
    const { rows } = await reader.query('SELECT count(*)::int AS n FROM kept', [], {
      timeoutMs: 5000,
    });
    expect(rows).toEqual([{ n: 4 }]);
  });
});
