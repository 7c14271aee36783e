import type { SqlClient } from './sql-client.js';

/**
 * What a module of the engine is built from. Every module is created once per engine and hands
 * out subject-bound APIs; the engine checks that a subject exists before any of them runs.
 */
export interface ModuleDeps {
  readonly client: SqlClient;
  readonly clock: () => Date;
  readonly newId: () => string;
  /**
   * The engine's one hook for writers to tell trust (src/trust/) what they wrote: a transaction
   * committed on its own (its xid) that wrote nothing a trust view reads, such as a recorded turn
   * or an arrival's manifest. A kept trust view outlives such a write without a probe. A writer
   * that says nothing costs the next read one probe, never a wrong answer.
   */
  readonly wroteNeutral?: (xid: string | null | undefined) => void;
}
