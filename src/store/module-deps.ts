import type { SqlClient } from './sql-client.js';

/**
 * What a module of the engine is built from. Every module is created once per engine and hands
 * out subject-bound APIs; the engine checks that a subject exists before any of them runs.
 */
export interface ModuleDeps {
  readonly client: SqlClient;
  readonly clock: () => Date;
  readonly newId: () => string;
}
