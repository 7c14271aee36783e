import { existsSync } from 'node:fs';
import { readOwnerPublicKey, renderFactLine } from '../../src/index.js';
import { keyPath } from '../owner-key-options.js';
import { flag, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';
import { factToJson } from '../fact-json.js';

export const MEMORY_OPTIONS = { subject: { type: 'string' }, all: { type: 'boolean' } } as const;
export const CHAIN_VERIFY_OPTIONS = {
  subject: { type: 'string' },
  key: { type: 'string' },
} as const;

/** Live memory by default; `--all` adds every other status, each line labelled. */
export async function memoryCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject');
  const opts = subject === undefined ? {} : { subject };
  const { facts, zone } = await ctx.withEngine(false, async (engine) => ({
    facts: await (flag(ctx.values, 'all') ? engine.memory.all(opts) : engine.memory.live(opts)),
    zone: await engine.timeZone.get(opts),
  }));
  ctx.print({ facts: facts.map((f) => factToJson(f)), timeZone: zone }, () =>
    facts.length === 0 ? 'no live memory' : facts.map((f) => renderFactLine(f, zone)).join('\n'),
  );
}

export async function chainVerifyCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject') ?? 'owner';
  // The key file's public half anchors the check outside the store, when it is at hand.
  const path = keyPath(ctx, subject);
  const anchored = stringValue(ctx.values, 'key') !== undefined || existsSync(path);
  const ownerKey = anchored ? readOwnerPublicKey(path) : undefined;
  const report = await ctx.withEngine(false, (engine) =>
    engine.chain.verify({ subject, ...(ownerKey === undefined ? {} : { ownerKey }) }),
  );
  const doc = report.ok
    ? { ok: true, length: report.length, brokenAt: null, headHash: report.headHash, anchored }
    : {
        ok: false,
        length: report.length,
        brokenAt: report.brokenAt,
        code: report.code,
        reason: report.reason,
      };
  ctx.print(doc, () =>
    report.ok
      ? `chain ok: ${report.length} decisions`
      : `chain BROKEN at link ${report.brokenAt} (${report.code}): ${report.reason}`,
  );
  // A broken chain is a failed check: the exit code says so too.
  if (!report.ok) ctx.setExitCode(3);
}
