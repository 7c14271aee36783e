import { existsSync } from 'node:fs';
import { DEFAULT_SUBJECT, readOwnerPublicKey } from '../../src/index.js';
import { renderFactLine } from '../../src/rules.js';
import { defineCommand } from '../command.js';
import { factToJson } from '../fact-json.js';
import { SUBJECT_OPTION } from '../options.js';
import { KEY_OPTIONS, keyPath } from '../owner-key-options.js';

/** Live memory by default; `--all` adds every other status, each line labelled. */
export const memoryCommand = defineCommand({
  path: ['memory'],
  summary: 'Prints live memory: the facts a model may be shown, each with its passport.',
  options: {
    ...SUBJECT_OPTION,
    all: { kind: 'flag', help: 'every fact, whatever its status, each labelled' },
  },
  async run(ctx) {
    const all = ctx.values.all;
    const { facts, zone } = await ctx.withSubject(ctx.values.subject, async (me) => ({
      facts: await (all ? me.facts.all() : me.facts.live()),
      zone: await me.arrival.timeZone(),
    }));
    ctx.print({ facts: facts.map((f) => factToJson(f)), timeZone: zone }, () =>
      facts.length === 0 ? 'no live memory' : facts.map((f) => renderFactLine(f, zone)).join('\n'),
    );
  },
});

/** `chain verify`: the owner-decision chain, anchored by the key file when it is at hand. */
export const chainVerifyCommand = defineCommand({
  path: ['chain', 'verify'],
  summary: 'Verifies the subject’s owner-decision chain; exits 3 when it is broken.',
  options: { ...SUBJECT_OPTION, key: KEY_OPTIONS.key },
  async run(ctx) {
    // The key file's public half anchors the check outside the store, when it is at hand.
    const path = keyPath(ctx, ctx.values.subject ?? DEFAULT_SUBJECT);
    const anchored = ctx.values.key !== undefined || existsSync(path);
    const ownerKey = anchored ? readOwnerPublicKey(path) : undefined;
    const report = await ctx.withSubject(ctx.values.subject, (me) =>
      me.owner.verifyChain(ownerKey === undefined ? {} : { ownerKey }),
    );
    const doc = report.ok
      ? {
          ok: true,
          length: report.length,
          brokenAt: null,
          headHash: report.headHash,
          anchored,
        }
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
  },
});
