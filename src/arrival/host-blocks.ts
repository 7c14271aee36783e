import { EngineError } from '../domain/errors.js';
import { TIERS, type Tier } from '../domain/manifest.js';
import { DEFAULT_BLOCK_TIMEOUT_MS, type ArrivalBlock, type BlockContext } from './blocks.js';

/**
 * A host's own block: "one join, in one place, over the tables that already hold what happened".
 * Either a read-only SQL query over the host's tables with a formatter, or a function.
 */
export type HostBlockDef = {
  name: string;
  tier: Tier;
  timeoutMs?: number;
  fallback?: string;
} & (
  | {
      sql: string;
      /** Parameters; a function receives the arrival's context (subject, session, now, zone). */
      params?: readonly unknown[] | ((ctx: BlockContext) => readonly unknown[]);
      format: (rows: Array<Record<string, unknown>>, ctx: BlockContext) => string;
    }
  | { render: (ctx: BlockContext) => Promise<string> }
);

const NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Checks a host block's definition (INVALID_ARGUMENT naming what is wrong) and makes it a block;
 * an SQL block runs through `readOnly`, which must change nothing.
 */
export function hostBlock(
  def: HostBlockDef,
  readOnly: (query: string, params: readonly unknown[]) => Promise<Array<Record<string, unknown>>>,
): ArrivalBlock {
  if (!NAME.test(def.name)) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `block name "${def.name}": use a-z, 0-9 and _ (starting with a letter)`,
    );
  }
  if (!TIERS.includes(def.tier))
    throw new EngineError('INVALID_ARGUMENT', `block tier must be one of ${TIERS.join(', ')}`);
  const timeoutMs = def.timeoutMs ?? DEFAULT_BLOCK_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new EngineError('INVALID_ARGUMENT', 'block timeout must be positive');
  const fallback = def.fallback ?? `[${def.name}] (unavailable this turn)`;
  if ('sql' in def) {
    const { sql, params, format } = def;
    return {
      name: def.name,
      tier: def.tier,
      timeoutMs,
      fallback,
      async render(ctx) {
        const values = typeof params === 'function' ? params(ctx) : (params ?? []);
        return format(await readOnly(sql, values), ctx);
      },
    };
  }
  const { render } = def;
  return {
    name: def.name,
    tier: def.tier,
    timeoutMs,
    fallback,
    // a host block's text only: it names no memory as shown (only memledger's blocks do)
    async render(ctx) {
      const text: unknown = await render(ctx);
      if (typeof text !== 'string') {
        throw new EngineError('INVALID_ARGUMENT', 'the block returned no text');
      }
      return text;
    },
  };
}
