import { randomInt } from 'node:crypto';
import { isEngineError } from '../domain/errors.js';
import { sqlVerdict, type ProbeOutcome } from '../domain/probe.js';
import { parseProbeSpec } from '../domain/probe-spec.js';
import { PROBE_ROLE } from '../store/migrations/0010-probe-role.js';
import type { QueryResult } from '../store/sql-client.js';
import { pgErrorCode } from '../store/store-error.js';
import { errorOutcome, type ProbeInstrument } from './instruments.js';

const SQLSTATE: Record<string, string> = {
  '25006': 'READ_ONLY_VIOLATION', // read_only_sql_transaction
  '57014': 'TIMEOUT', // query_canceled (statement_timeout)
};

/** int4, float, and the decimal strings drivers use for int8 and numeric. */
function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : null;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(value.trim())) {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/**
 * The built-in SQL instrument: one statement on the engine's own store inside a transaction that
 * is declared READ ONLY first and always rolled back, with a statement timeout (`SET LOCAL`, so
 * it ends with the transaction), run as the probe role (`PROBE_ROLE`, `SET LOCAL ROLE`): what
 * that role may not do or read, PostgreSQL refuses, however the query spells it. The reader it is
 * given (`boundedSql`) ends the statement at the timeout on both engines: PostgreSQL by its
 * statement_timeout, PGlite by stopping the snapshot the statement runs on.
 */
export function createSqlInstrument(): ProbeInstrument {
  return {
    name: 'sql',
    kind: 'sql',
    // 2: runs as the probe role (a calibration of 1 vouched for a reader with the store's rights).
    fingerprint: 'memledger:sql:2',
    async run(spec, ctx): Promise<ProbeOutcome> {
      if (spec.kind !== 'sql') return errorOutcome('INSTRUMENT_FAILED', 'not an sql probe');
      // The engine has parsed the spec already; checked again for a caller that runs the
      // instrument itself: a query that is not one read, or names a denied function, is refused
      // (INVALID_ARGUMENT) before anything reaches the database.
      parseProbeSpec(spec);
      const asked = { query: spec.query, op: spec.op, expect: spec.expect };
      let result: QueryResult<Record<string, unknown>>;
      try {
        result = await ctx.sql.query(spec.query, [], {
          timeoutMs: ctx.sqlTimeoutMs,
          role: PROBE_ROLE,
        });
      } catch (err) {
        if (isEngineError(err) && err.code === 'PROBE_ROLE_MISSING') {
          return errorOutcome('PROBE_ROLE_MISSING', err.message, { ...asked, role: PROBE_ROLE });
        }
        // An engine failure (a snapshot that stopped) carries no SQLSTATE.
        const state = isEngineError(err) ? undefined : pgErrorCode(err);
        const code = (state === undefined ? undefined : SQLSTATE[state]) ?? 'QUERY_FAILED';
        return errorOutcome(code, (err as Error).message, { ...asked, sqlstate: state ?? null });
      }
      const { rows } = result;
      const row = rows[0];
      const columns = result.columns ?? (row === undefined ? [] : Object.keys(row));
      if (rows.length !== 1 || columns.length !== 1) {
        return errorOutcome(
          'BAD_RESULT',
          `the query must return one row with one column, not ${rows.length} row(s) with ${columns.length} column(s)`,
          asked,
        );
      }
      const value = asNumber(row?.[columns[0] as string]);
      if (value === null) {
        return errorOutcome('BAD_RESULT', 'the query result is not a finite number', asked);
      }
      return { verdict: sqlVerdict(spec, value), errorCode: null, evidence: { ...asked, value } };
    },
    async controls() {
      // Migration 1 is in every store and the probe role may read schema_migrations; version -n
      // is never there. Same check, different needle. Both also ask that the statement ran as
      // the probe role, so an instrument that reads with the store's own rights cannot pass.
      const absent = -randomInt(1, 1_000_000);
      const query = (v: number) =>
        `SELECT count(*)::int AS n FROM schema_migrations WHERE version = ${v} AND current_user = '${PROBE_ROLE}'`;
      return {
        positive: { kind: 'sql', query: query(1), op: 'eq', expect: 1 },
        negative: { kind: 'sql', query: query(absent), op: 'eq', expect: 1 },
      };
    },
  };
}
