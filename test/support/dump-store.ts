import type { Engine } from '../../src/index.js';
import { storeClient } from '../../src/engine/test-access.js';

/**
 * A logical dump of every table in the store's schema: each table's rows, sorted, hashed. Two
 * equal dumps mean no row was added, changed or removed.
 */
export async function dumpStore(engine: Engine): Promise<Record<string, string>> {
  const sql = storeClient(engine);
  const { rows: tables } = await sql.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows } = await sql.query<{ n: number; digest: string }>(
      `SELECT count(*)::int AS n,
              md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS digest
       FROM "${name}" t`,
    );
    out[name] = `${rows[0]?.n} rows ${rows[0]?.digest}`;
  }
  return out;
}

/**
 * `dumpStore` in one query (one round trip instead of one per table), optionally leaving tables
 * out; checked against dumpStore itself before every property.
 */
export async function digests(
  engine: Engine,
  except: readonly string[] = [],
): Promise<Record<string, string>> {
  const sql = storeClient(engine);
  const { rows: tables } = await sql.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const parts = tables
    .filter((t) => !except.includes(t.name))
    .map(
      ({ name }) => `SELECT '${name}' AS name, count(*)::int AS n,
        md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS digest FROM "${name}" t`,
    );
  const { rows } = await sql.query<{ name: string; n: number; digest: string }>(
    parts.join(' UNION ALL '),
  );
  return Object.fromEntries(rows.map((r) => [r.name, `${r.n} rows ${r.digest}`]));
}
