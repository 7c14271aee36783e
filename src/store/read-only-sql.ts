import { EngineError } from '../domain/errors.js';
import type { QueryResult, SqlClient, SqlExecutor } from './sql-client.js';

/** Per-statement options of `ReadOnlySql.query`. */
export interface ReadOnlyQueryOptions {
  timeoutMs?: number;
  /**
   * Run the statement as this database role (`SET LOCAL ROLE`, see `readOnlySql`). A reader made
   * with a role accepts only that role here.
   */
  role?: string;
}

/**
 * Reads the store and changes nothing: what host blocks and probe instruments are given instead
 * of the store's client, so no public extension point can write the store's tables.
 */
export interface ReadOnlySql {
  /**
   * One statement in a READ ONLY transaction that is always rolled back. The text goes out as
   * one prepared statement (PostgreSQL would otherwise run `COMMIT; INSERT …` as two); a
   * snapshot is taken first, so the statement cannot `SET TRANSACTION READ WRITE`; the rollback
   * undoes even a session setting (`SET search_path …`). Database errors come back as thrown.
   */
  query<T = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    options?: ReadOnlyQueryOptions,
  ): Promise<QueryResult<T>>;
}

/** How a reader runs every statement. */
export interface ReadOnlySqlOptions {
  /** Every statement runs as this role; a statement may not ask for another. */
  role?: string;
}

/** Thrown out of the transaction to roll it back; never seen outside. */
const ROLLBACK = Symbol('rollback');
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** True when the role has an attribute or a membership a sandboxed statement must not have. */
const UNSAFE_ROLE = `SELECT r.rolsuper OR r.rolreplication OR r.rolbypassrls OR r.rolcreaterole
         OR r.rolcreatedb OR EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid)
         AS unsafe
    FROM pg_roles r WHERE r.rolname = current_user`;

function roleMissing(role: string, why: string, cause?: unknown): EngineError {
  return new EngineError(
    'PROBE_ROLE_MISSING',
    `cannot run as the database role "${role}": ${why} (docs/PROBES.md, "The probe role")`,
    { data: { role }, ...(cause === undefined ? {} : { cause }) },
  );
}

/**
 * Enters `role` for the rest of the transaction and takes the snapshot. A role that does not
 * exist, that the store's user may not SET ROLE to, or that could do more than read is refused
 * with PROBE_ROLE_MISSING.
 */
async function enterRole(tx: SqlExecutor, role: string): Promise<void> {
  try {
    await tx.query(`SET LOCAL ROLE "${role}"`);
  } catch (err) {
    throw roleMissing(role, (err as Error).message, err);
  }
  const { rows } = await tx.query<{ unsafe: boolean }>(UNSAFE_ROLE);
  if (rows[0]?.unsafe !== false) {
    throw roleMissing(
      role,
      'it is a superuser, may replicate, bypass row security, create roles or databases, or is a member of another role',
    );
  }
}

/**
 * Runs `text` as `role` behind a savepoint, then drops every session-level advisory lock the
 * session holds: unlike everything else, such a lock survives the rollback (even of a statement
 * that failed) and would block later work on a pooled connection. memledger itself only takes
 * transaction-level advisory locks, which this leaves alone. A statement that left the role
 * (`set_config('role', …)`) is refused after the fact.
 */
async function sandboxed<T>(
  tx: SqlExecutor,
  role: string,
  text: string,
  params: readonly unknown[],
): Promise<QueryResult<T>> {
  await tx.query('SAVEPOINT memledger_sandboxed');
  let result: QueryResult<T>;
  try {
    result = await tx.query<T>(text, params, { oneStatement: true });
  } catch (err) {
    await tx.query('ROLLBACK TO SAVEPOINT memledger_sandboxed');
    await tx.query('SELECT pg_advisory_unlock_all()');
    throw err;
  }
  const { rows } = await tx.query<{ role: string }>(
    'SELECT current_user::text AS role, pg_advisory_unlock_all()',
  );
  if (rows[0]?.role !== role) {
    throw roleMissing(role, `the statement left it (it ended as "${String(rows[0]?.role)}")`);
  }
  return result;
}

/**
 * A reader over `client`. With `options.role` (or a statement's own `role`), each statement runs
 * as that database role, so PostgreSQL refuses what the role may not do; without one, as the
 * store's user (host blocks).
 */
export function readOnlySql(client: SqlClient, options: ReadOnlySqlOptions = {}): ReadOnlySql {
  const fixed = options.role;
  if (fixed !== undefined && !ROLE_NAME.test(fixed)) {
    throw new EngineError('INVALID_ARGUMENT', `not a plain role name: ${JSON.stringify(fixed)}`);
  }
  return {
    async query<T>(
      text: string,
      params: readonly unknown[] = [],
      queryOptions: ReadOnlyQueryOptions = {},
    ): Promise<QueryResult<T>> {
      const asked = queryOptions.role;
      if (asked !== undefined && (fixed !== undefined ? asked !== fixed : !ROLE_NAME.test(asked))) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          fixed === undefined
            ? `not a plain role name: ${JSON.stringify(asked)}`
            : `this reader runs as "${fixed}" only`,
        );
      }
      const role = fixed ?? asked;
      let result: QueryResult<T> | undefined;
      try {
        await client.transaction(async (tx) => {
          await tx.query('SET TRANSACTION READ ONLY');
          if (queryOptions.timeoutMs !== undefined) {
            // SET LOCAL ends with the transaction; PGlite accepts it but cannot interrupt (boundedSql).
            const ms = Math.max(1, Math.floor(queryOptions.timeoutMs));
            await tx.query(`SET LOCAL statement_timeout = ${ms}`);
          }
          if (role === undefined) {
            // A snapshot now: from here on the transaction can no longer be made read-write.
            await tx.query('SELECT 1');
            result = await tx.query<T>(text, params, { oneStatement: true });
          } else {
            await enterRole(tx, role); // takes the snapshot too
            result = await sandboxed<T>(tx, role, text, params);
          }
          throw ROLLBACK;
        });
      } catch (err) {
        if (err !== ROLLBACK) throw err;
      }
      return result as QueryResult<T>;
    },
  };
}
