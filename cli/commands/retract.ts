import { EngineError } from '../../src/domain/errors.js';
import { PROBE_VERDICTS } from '../../src/domain/probe.js';
import { parseProbeSpec } from '../../src/domain/probe-spec.js';
import { CAUGHT_BY, RETRACTION_VERDICTS, SETTLED_VERDICTS } from '../../src/domain/retraction.js';
import { shownInline, shownJson } from '../../src/domain/shown-text.js';
import { parseChoice } from '../../src/domain/vocabulary.js';
import type { FactId, Retraction, RetractInput, RetractionId } from '../../src/index.js';
import { defineCommand } from '../command.js';
import type { CliIo } from '../io.js';
import { SUBJECT_OPTION, type OptionSpecs } from '../options.js';
import { PROBE_CONFIG_OPTIONS, probeConfig } from '../probe-options.js';
import { recordSignedHead } from '../head-file.js';
import { KEY_OPTIONS, ownerSigner } from '../owner-key-options.js';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** A retraction as the `retract` commands print it: its strings shown as stored text is. */
export function retractionToJson(r: Retraction): Record<string, unknown> {
  return shownJson({
    id: r.id,
    subject: r.subjectId,
    claim: r.claim,
    claimedAt: iso(r.claimedAt),
    claimSurface: r.claimSurface,
    claimRef: r.claimRef,
    stoodOn: r.stoodOn,
    whyWrong: r.whyWrong,
    corrected: r.correctedClaim,
    correctedAt: r.correctedAt.toISOString(),
    caughtBy: r.caughtBy,
    tags: r.tags,
    falsifier: {
      procedure: r.procedure,
      passObservation: r.passObservation,
      overturnCondition: r.overturnCondition,
    },
    probe: r.probe,
    dueAt: r.dueAt.toISOString(),
    factId: r.factId,
    verdict: r.verdict,
    settlement:
      r.settledAt === null
        ? null
        : {
            at: r.settledAt.toISOString(),
            outcome: r.settledOutcome,
            by: r.settledBy,
            probeRecordId: r.settledProbeRecordId,
            restoredFactId: r.restoredFactId,
          },
  }) as Record<string, unknown>;
}

function line(r: Retraction): string {
  const settled =
    r.verdict === 'unchecked'
      ? `due ${r.dueAt.toISOString().slice(0, 10)}`
      : `settled by ${r.settledBy ?? '?'}`;
  const fact = r.factId === null ? '' : ` (fact ${shownInline(r.factId)})`;
  return `[${shownInline(r.id)}] ${r.verdict.toUpperCase()} (${shownInline(settled)}) "${shownInline(r.claim)}" → "${shownInline(r.correctedClaim)}"${fact}`;
}

/** `--probe-file spec.json`: `{"probe": {…spec…}, "standsIf": V, "overturnsIf": V}`. */
async function readProbeFile(io: CliIo, path: string): Promise<NonNullable<RetractInput['probe']>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await io.readFile(path));
  } catch (err) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `cannot read probe file ${path}: ${(err as Error).message}`,
    );
  }
  const o = parsed as { probe?: unknown; standsIf?: unknown; overturnsIf?: unknown } | null;
  if (
    o === null ||
    typeof o !== 'object' ||
    typeof o.standsIf !== 'string' ||
    typeof o.overturnsIf !== 'string'
  ) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `${path} must be {"probe": {…spec…}, "standsIf": "<verdict>", "overturnsIf": "<verdict>"}`,
    );
  }
  return {
    spec: parseProbeSpec(o.probe),
    standsIf: parseChoice(PROBE_VERDICTS, o.standsIf, `"standsIf" in ${path}`),
    overturnsIf: parseChoice(PROBE_VERDICTS, o.overturnsIf, `"overturnsIf" in ${path}`),
  };
}

const required = (value: string, help: string) =>
  ({ kind: 'text', value, required: true, help }) as const;

const RETRACT_OPTIONS = {
  claim: required('C', 'the claim that was wrong'),
  'stood-on': required('S', 'what the claim stood on'),
  'why-wrong': required('W', 'why it was wrong'),
  corrected: required('C2', 'the corrected claim'),
  procedure: required('P', 'how to check the correction later (the falsifier)'),
  'pass-obs': required('O1', 'the observation that keeps the retraction standing'),
  'overturn-if': required('O2', 'the observation that overturns it'),
  fact: {
    kind: 'text',
    value: 'ID',
    help: 'a live fact this retraction names (one the owner approved stays live, disputed, until signed)',
  },
  sign: {
    kind: 'flag',
    help: 'sign it with the owner key as it is recorded: the fact leaves live memory (needs --fact)',
  },
  'probe-file': {
    kind: 'text',
    value: 'spec.json',
    help: 'a machine probe that can settle the falsifier, with the verdict for each side',
  },
  'caught-by': { kind: 'choice', choices: CAUGHT_BY, help: 'who caught the error (default self)' },
  'corrected-at': { kind: 'date', value: 'ISO', help: 'when the error was caught (default now)' },
  'due-days': {
    kind: 'int',
    value: 'N',
    min: 0,
    help: 'days until the falsifier matures (default 3)',
  },
  'claimed-at': { kind: 'date', value: 'ISO', help: 'when the claim was made' },
  surface: { kind: 'text', value: 'S', help: 'where the claim was made' },
  ref: { kind: 'text', value: 'R', help: 'a reference to the claim (a message id, a URL)' },
  tags: { kind: 'list', value: 'a,b', help: 'tags' },
  ...SUBJECT_OPTION,
  ...KEY_OPTIONS,
} as const satisfies OptionSpecs;

/** `retract`: records a wrong claim, its correction, and a falsifier with polarity. */
export const retractCommand = defineCommand({
  path: ['retract'],
  summary:
    'Records a wrong claim, its correction, and a falsifier that can overturn the correction.',
  options: RETRACT_OPTIONS,
  async run(ctx) {
    const v = ctx.values;
    const probe =
      v['probe-file'] === undefined ? undefined : await readProbeFile(ctx.io, v['probe-file']);
    const optional = <K extends keyof RetractInput>(key: K, value: RetractInput[K] | undefined) =>
      (value === undefined ? {} : { [key]: value }) as Partial<Pick<RetractInput, K>>;
    if (v.sign === true && v.fact === undefined) {
      throw new EngineError('INVALID_ARGUMENT', '--sign takes a fact down: name it with --fact', {
        data: { field: 'fact' },
      });
    }
    const r = await ctx.withSubject(v.subject, async (me) => {
      // the key before anything is written: a wrong passphrase records nothing
      const owner = v.sign === true ? await ownerSigner(ctx, me) : null;
      const recorded = await me.ledger.retract({
        claim: v.claim,
        stoodOn: v['stood-on'],
        whyWrong: v['why-wrong'],
        corrected: v.corrected,
        procedure: v.procedure,
        passObservation: v['pass-obs'],
        overturnCondition: v['overturn-if'],
        ...optional('factId', v.fact as FactId | undefined),
        ...optional('caughtBy', v['caught-by']),
        ...optional('claimedAt', v['claimed-at']),
        ...optional('correctedAt', v['corrected-at']),
        ...optional('claimSurface', v.surface),
        ...optional('claimRef', v.ref),
        ...optional('tags', v.tags === undefined ? undefined : [...v.tags]),
        ...optional('dueDays', v['due-days']),
        ...optional('probe', probe),
      });
      if (owner === null) return { row: recorded, signed: null };
      const signed = await me.owner.retract({
        retractionId: recorded.id,
        ...(recorded.factId === null ? {} : { factId: recorded.factId }),
        signer: owner.signer,
      });
      recordSignedHead(ctx, owner.keyFile, me, signed);
      return { row: recorded, signed };
    });
    ctx.print({ ...retractionToJson(r.row), signed: r.signed }, () =>
      [
        `retracted: ${line(r.row)}`,
        ...(r.signed !== null
          ? [`signed (decision #${r.signed.seq}): fact ${r.signed.factId} left live memory`]
          : r.row.factId === null
            ? []
            : [
                `fact ${r.row.factId}: a fact the owner approved stays live, marked disputed, until the owner signs this (memledger retract sign ${r.row.id})`,
              ]),
      ].join('\n'),
    );
  },
});

/** `retract sign`: the owner signs a recorded retraction; the fact it names leaves live memory. */
export const retractSignCommand = defineCommand({
  path: ['retract', 'sign'],
  summary: 'Signs a recorded retraction with the owner key: the fact it names leaves live memory.',
  positionals: ['<id>'],
  options: {
    ...SUBJECT_OPTION,
    ...KEY_OPTIONS,
  },
  async run(ctx) {
    const [id] = ctx.positionals;
    if (id === undefined) {
      throw new EngineError('INVALID_ARGUMENT', 'usage: memledger retract sign <id>');
    }
    const signed = await ctx.withSubject(ctx.values.subject, async (me) => {
      // found, and shown, before the passphrase is asked for: the owner signs what they read
      const row = await me.ledger.get(id as RetractionId);
      if (row.factId === null) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `retraction "${row.id}" names no fact: it takes nothing out of memory, so there is nothing to sign`,
        );
      }
      const fact = await me.facts.get(row.factId);
      // for the person signing (with --json, stderr holds only an error)
      if (!ctx.json)
        ctx.io.stderr(
          `signing retraction ${shownInline(row.id)}: "${shownInline(row.claim)}" → "${shownInline(row.correctedClaim)}"\n` +
            `  it takes out of live memory fact ${shownInline(fact.id)} (${fact.status}): ${shownInline(fact.text)}\n`,
        );
      const { signer, keyFile } = await ownerSigner(ctx, me);
      // the fact shown: a row that names another by now is refused, nothing signed
      const result = await me.owner.retract({
        retractionId: row.id,
        factId: row.factId,
        signer,
      });
      recordSignedHead(ctx, keyFile, me, result);
      return result;
    });
    ctx.print(
      signed,
      () =>
        `signed retraction ${signed.retractionId} (decision #${signed.seq}): fact ${signed.factId} left live memory`,
    );
  },
});

/** `retract list`: the subject's retractions, by verdict. */
export const retractListCommand = defineCommand({
  path: ['retract', 'list'],
  summary: 'Lists the subject’s retractions.',
  options: {
    ...SUBJECT_OPTION,
    verdict: { kind: 'choice', choices: RETRACTION_VERDICTS, help: 'only these' },
  },
  async run(ctx) {
    const { verdict } = ctx.values;
    const rows = await ctx.withSubject(ctx.values.subject, (me) =>
      me.ledger.list(verdict === undefined ? {} : { verdict }),
    );
    ctx.print({ retractions: rows.map(retractionToJson) }, () =>
      rows.length === 0 ? 'no retractions' : rows.map(line).join('\n'),
    );
  },
});

/** `retract due`: the unchecked falsifiers whose maturity date has passed. */
export const retractDueCommand = defineCommand({
  path: ['retract', 'due'],
  summary: 'Lists the unchecked falsifiers that are due to be settled.',
  options: SUBJECT_OPTION,
  async run(ctx) {
    const rows = await ctx.withSubject(ctx.values.subject, (me) => me.ledger.due());
    ctx.print({ due: rows.map(retractionToJson) }, () =>
      rows.length === 0 ? 'no falsifier is due' : rows.map(line).join('\n'),
    );
  },
});

/** `retract settle`: settles a due falsifier by the owner's verdict or by a calibrated probe. */
export const retractSettleCommand = defineCommand({
  path: ['retract', 'settle'],
  summary: 'Settles a due falsifier: by a calibrated probe, or by the verdict the owner observed.',
  positionals: ['<id>'],
  options: {
    'run-probe': { kind: 'flag', help: 'settle by running the retraction’s probe' },
    verdict: { kind: 'choice', choices: SETTLED_VERDICTS, help: 'settle by this verdict' },
    outcome: { kind: 'text', value: 'TEXT', help: 'what was observed (with --verdict)' },
    by: { kind: 'text', value: 'WHO', help: 'who settles (default owner, or probe)' },
    ...SUBJECT_OPTION,
    ...PROBE_CONFIG_OPTIONS,
  },
  notes: ['Give exactly one of --run-probe or --verdict V --outcome TEXT.'],
  async run(ctx) {
    const id = ctx.positionals[0] as RetractionId | undefined;
    if (id === undefined)
      throw new EngineError(
        'INVALID_ARGUMENT',
        'usage: memledger retract settle <id> (--run-probe | --verdict V --outcome TEXT)',
      );
    const { verdict, outcome, by } = ctx.values;
    const runProbe = ctx.values['run-probe'];
    if (runProbe === (verdict !== undefined)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `settle with exactly one of --run-probe or --verdict ${SETTLED_VERDICTS.join('|')}`,
      );
    }
    if (verdict !== undefined && outcome === undefined) {
      throw new EngineError('INVALID_ARGUMENT', '--verdict needs --outcome: what was observed');
    }
    const who = by === undefined ? {} : { by };
    const r = await ctx.withSubject(
      ctx.values.subject,
      (me) =>
        me.ledger.settle(
          verdict === undefined
            ? { retractionId: id, runProbe: true, ...who }
            : { retractionId: id, verdict, outcome: outcome ?? '', ...who },
        ),
      // the probe runs inside the roots and hosts this command is given, like `memledger probe`
      { probes: probeConfig(ctx) },
    );
    ctx.print(
      retractionToJson(r),
      () =>
        `settled: ${line(r)}${r.restoredFactId === null ? '' : `; restored fact ${r.restoredFactId}`}`,
    );
  },
});
