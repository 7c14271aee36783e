import { renderFactLine } from '../../src/domain/fact-render.js';
import { shownInline } from '../../src/domain/shown-text.js';
import { defineCommand } from '../command.js';
import { CliError } from '../errors.js';
import { factToJson } from '../fact-json.js';
import { SUBJECT_OPTION } from '../options.js';
import { verifyAnchored } from '../head-file.js';
import { anchorJson, anchorLine, KEY_OPTIONS } from '../owner-key-options.js';

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
    const { facts, zone, integrity } = await ctx.withSubject(ctx.values.subject, async (me) => ({
      facts: await (all ? me.facts.all() : me.facts.live()),
      zone: await me.arrival.timeZone(),
      integrity: await me.facts.integrity(),
    }));
    // the same warning the arrival's integrity block gives: what was withheld, and why (its
    // lines quote stored ids and slots: shown, so what does not show is visible)
    const lines = integrity.warning.map((line) => shownInline(line));
    const warning = !integrity.ok
      ? `INTEGRITY WARNING: part of the stored memory failed verification and is not shown as live; run \`memledger chain verify\`\n${lines.join('\n')}\n\n`
      : lines.length > 0
        ? `note: ${lines.join(' ')}\n\n`
        : '';
    ctx.print(
      {
        facts: facts.map((f) => factToJson(f)),
        timeZone: zone,
        integrity: { ok: integrity.ok, warning: lines },
      },
      () =>
        warning +
        (facts.length === 0
          ? 'no live memory'
          : facts.map((f) => renderFactLine(f, zone)).join('\n')),
    );
  },
});

/** `chain verify`: the owner-decision chain, anchored by the key file when it is at hand. */
export const chainVerifyCommand = defineCommand({
  path: ['chain', 'verify'],
  summary: 'Verifies the subject’s owner-decision chain; exits 3 when it is broken.',
  options: {
    ...SUBJECT_OPTION,
    key: KEY_OPTIONS.key,
    unanchored: {
      kind: 'flag',
      help: "check against the store's own copy of the owner key when no key file is at hand",
    },
  },
  async run(ctx) {
    // The key file's public half anchors the check outside the store: the named one, else the
    // subject's default key file (owner-key-options.ts, anchorKeyFile). Without one, the check
    // proves only that the store agrees with itself: refused unless --unanchored says so.
    const { anchor, report, signedHead } = await ctx.withSubject(ctx.values.subject, (me) =>
      verifyAnchored(ctx, me),
    );
    if (anchor.keyFile === null && ctx.values.unanchored !== true) {
      throw new CliError(
        'NOT_ANCHORED',
        `${anchorLine(anchor)}. Pass --key F (or set MEMLEDGER_OWNER_KEY) with the owner's key file, ` +
          'or --unanchored to check the chain against the key the store holds',
      );
    }
    const doc = report.ok
      ? {
          ok: true,
          length: report.length,
          brokenAt: null,
          headHash: report.headHash,
          signedHead,
          ...anchorJson(anchor),
        }
      : {
          ok: false,
          length: report.length,
          brokenAt: report.brokenAt,
          code: report.code,
          reason: report.reason,
          signedHead,
          ...anchorJson(anchor),
        };
    ctx.print(
      doc,
      () =>
        (report.ok
          ? `chain ok: ${report.length} decisions`
          : `chain BROKEN at link ${report.brokenAt} (${report.code}): ${report.reason}`) +
        `\n${anchorLine(anchor)}` +
        (signedHead === null
          ? anchor.keyFile === null
            ? ''
            : '\nno signed head recorded beside the key file yet'
          : `\nsigned head: link ${signedHead.seq} (recorded beside the key file)`),
    );
    // A broken chain is a failed check: the exit code says so too.
    if (!report.ok) ctx.setExitCode(3);
  },
});
