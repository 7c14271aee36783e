// Removing forgotten bytes is a rewrite of every table a forget can touch. Forgets that arrive
// while one runs share the next rewrite (it starts after they committed): a burst of them costs
// two rewrites, not one each. A real embedded store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeClient } from '../src/engine/test-access.js';
import { scrubForgotten } from '../src/store/forget-sql.js';
import type { SqlClient } from '../src/store/sql-client.js';
import { openTestEngine, type TestEngine } from './support/engines.js';

describe('removing forgotten bytes [pglite]', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await openTestEngine('pglite');
  });
  afterAll(() => t.close());

  it('runs one rewrite at a time, and those who arrive meanwhile share the next', async () => {
    const client = storeClient(t.engine);
    const rewrites: string[] = [];
    const counted = {
      kind: client.kind,
      exec: (sql: string) => {
        if (sql.startsWith('VACUUM FULL')) rewrites.push(sql);
        return client.exec(sql);
      },
      query: client.query.bind(client),
    } as unknown as SqlClient;
    const reports = await Promise.all([1, 2, 3, 4].map(() => scrubForgotten(counted)));
    expect(reports.every((r) => r.walCleared && r.rewritten.includes('turns'))).toBe(true);
    // the first, and one after it for the three that waited (each run rewrites the statistics too
    // when the role may: count the table rewrites alone)
    expect(rewrites.filter((x) => !x.includes('pg_statistic'))).toHaveLength(2);
    // once both are done, the next forget gets a rewrite of its own
    await scrubForgotten(counted);
    expect(rewrites.filter((x) => !x.includes('pg_statistic'))).toHaveLength(3);
  });
});
