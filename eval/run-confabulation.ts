/**
 * The confabulation replay (issue 15, seed 001's "replay a day where the agent was right on every
 * turn and nobody corrected it, then count what lands"): every labelled day of
 * `CONFABULATION_DAYS` is recorded in a subject of its own, memledger's reflection runs on it
 * against the given model, and the gate's verdicts are counted per prompt version and slot.
 * From the labels: the confabulation rate (items from clean days that reach the pile) and the
 * recall of genuine facts (the share of labelled items proposed, and attested, in the pile).
 * Nothing is approved, so nothing may be live; the report says how many are, from the trust view.
 */
import { createEngine, type Engine, type LlmClient, type SubjectHandle } from '../src/index.js';
import { CONFABULATION_DAYS, type GenuineItem, type LabelledDay } from './confabulation-days.js';

/** The slots of the labels and their rule; each day's subject starts with exactly these. */
const USER_FACT_SLOTS = new Set(['what_i_know_about_user', 'stances']);

/** One pile item of a day, with where it points. */
interface PileItem {
  day: string;
  kind: LabelledDay['kind'];
  slot: string;
  text: string;
  attested: boolean;
  seq: number | null;
  quote: string | null;
}

/** Counts of one prompt version and slot, over every day. */
export interface SlotCounts {
  slot: string;
  proposed: number;
  dropped: Record<string, number>;
  reachedPile: number;
  unattested: number;
  /** Of those reaching the pile, the ones from clean days. */
  fromCleanDays: number;
}

/** One model's run over the set. */
export interface ConfabulationReport {
  provider: string;
  model: string;
  url: string;
  promptVersion: string;
  days: { clean: number; facts: number; corrections: number };
  /** Days whose reflection failed (LLM_FAILED), with the message; they count nowhere else. */
  failed: Array<{ day: string; code: string; message: string }>;
  slots: SlotCounts[];
  clean: {
    /** Items from clean days that reached the pile: the confabulation count. */
    reachedPile: number;
    /** The same, per clean day reflected. */
    perDay: number;
    /** Clean days with at least one item in the pile. */
    daysWithItems: number;
    /** Clean days whose reflection ran (did not fail). */
    daysReflected: number;
    /** Items from clean days live after the run (0 unless something bypassed the owner). */
    live: number;
    /** Every clean-day pile item, for the reader of the report. */
    items: Array<{ day: string; slot: string; text: string; attested: boolean }>;
  };
  genuine: {
    labelled: number;
    /** Labelled items the reflection proposed that reached the pile attested. */
    found: number;
    recall: number;
    /** Labelled items in the pile but flagged unattested. */
    foundUnattested: number;
    missed: Array<{ day: string; slot: string; about: string }>;
  };
  /** Items reaching the pile on fact and correction days that match no label. */
  unlabelledOnOtherDays: number;
  /** Facts live in any day's subject after the run, as the trust view sees them. */
  liveAfter: number;
  tokens: { input: number; output: number };
  durationMs: number;
}

const words = (s: string) =>
  new Set(
    s
      .toLowerCase()
      .split(/[^\p{L}\p{N}']+/u)
      .filter((w) => w.length > 2),
  );

/** Whether a pile item is the labelled one: same turn, same kind of slot, overlapping quote. */
function matches(item: PileItem, label: GenuineItem): boolean {
  if (item.seq !== label.turn) return false;
  const sameKind =
    USER_FACT_SLOTS.has(item.slot) === USER_FACT_SLOTS.has(label.slot) &&
    (item.slot === 'corrections_received') === (label.slot === 'corrections_received');
  if (!sameKind) return false;
  const quote = (item.quote ?? '').toLowerCase();
  const wanted = label.quote.toLowerCase();
  if (quote === '') return false;
  if (quote.includes(wanted) || wanted.includes(quote)) return true;
  const a = words(quote);
  const b = words(wanted);
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared >= Math.max(2, Math.ceil(Math.min(a.size, b.size) / 2));
}

async function recordDay(me: SubjectHandle, day: LabelledDay): Promise<string> {
  const session = await me.sessions.create({ title: day.id });
  for (const t of day.turns) {
    await me.turns.add({
      sessionId: session.id,
      role: t.role,
      content: t.text,
      ...(t.role === 'assistant'
        ? {
            receipt: {
              ...(t.tools === undefined ? {} : { tools: t.tools }),
              ...(t.sources === undefined ? {} : { sources: t.sources }),
              ...(t.noTools === true ? { noTools: true } : {}),
            },
          }
        : {}),
      ...(t.corrective === true ? { corrective: true } : {}),
    });
  }
  return session.id;
}

/**
 * Replays every day against `llm` on a fresh embedded store (`memory://`). `onProgress` gets a
 * line per day (the caller shows it on a terminal only).
 */
export async function runConfabulation(
  llm: LlmClient,
  onProgress: (line: string) => void = () => undefined,
  days: readonly LabelledDay[] = CONFABULATION_DAYS,
): Promise<ConfabulationReport> {
  const engine: Engine = await createEngine({ db: 'memory://', llm });
  const started = Date.now();
  try {
    const slots = new Map<string, SlotCounts>();
    const slotOf = (slot: string) => {
      let s = slots.get(slot);
      if (s === undefined) {
        s = { slot, proposed: 0, dropped: {}, reachedPile: 0, unattested: 0, fromCleanDays: 0 };
        slots.set(slot, s);
      }
      return s;
    };
    const failed: ConfabulationReport['failed'] = [];
    const pile: PileItem[] = [];
    const handles: SubjectHandle[] = [];
    let promptVersion = '';
    const tokens = { input: 0, output: 0 };
    let n = 0;
    for (const day of days) {
      n++;
      await engine.subjects.create(`day-${day.id}`);
      const me = engine.subject(`day-${day.id}`);
      handles.push(me);
      const sessionId = await recordDay(me, day);
      let result;
      try {
        result = await me.reflection.reflect({ sessionId });
      } catch (err) {
        const e = err as { code?: string; message?: string };
        failed.push({ day: day.id, code: e.code ?? 'ERROR', message: e.message ?? String(err) });
        onProgress(`confabulation: ${n}/${days.length} ${day.id} failed: ${e.code ?? ''}`);
        continue;
      }
      promptVersion = result.reflection.promptVersion;
      tokens.input += result.reflection.usage.inputTokens;
      tokens.output += result.reflection.usage.outputTokens;
      for (const d of result.dropped) {
        const s = slotOf(d.slot);
        s.proposed++;
        s.dropped[d.code] = (s.dropped[d.code] ?? 0) + 1;
      }
      for (const p of result.proposed) {
        const s = slotOf(p.slot);
        s.proposed++;
        s.reachedPile++;
        if (!p.attested) s.unattested++;
        if (day.kind === 'clean') s.fromCleanDays++;
        const fact = await me.facts.get(p.id);
        pile.push({
          day: day.id,
          kind: day.kind,
          slot: p.slot,
          text: p.text,
          attested: p.attested,
          seq: fact.evidence.seq,
          quote: fact.evidence.quote,
        });
      }
      onProgress(
        `confabulation: ${n}/${days.length} ${day.id}: ${result.proposed.length + result.dropped.length} proposed, ${result.dropped.length} dropped`,
      );
    }

    const reflected = days.filter((d) => !failed.some((f) => f.day === d.id));
    const cleanDays = reflected.filter((d) => d.kind === 'clean');
    const cleanItems = pile.filter((p) => p.kind === 'clean');
    let liveAfter = 0;
    let cleanLive = 0;
    for (const [i, me] of handles.entries()) {
      const live = (await me.facts.live()).length;
      liveAfter += live;
      if (days[i]?.kind === 'clean') cleanLive += live;
    }
    const labelled = reflected.flatMap((d) => d.genuine.map((g) => ({ day: d, g })));
    let found = 0;
    let foundUnattested = 0;
    const missed: ConfabulationReport['genuine']['missed'] = [];
    const claimed = new Set<PileItem>();
    for (const { day, g } of labelled) {
      const hits = pile.filter((p) => p.day === day.id && matches(p, g));
      hits.forEach((h) => claimed.add(h));
      if (hits.some((h) => h.attested)) found++;
      else if (hits.length > 0) foundUnattested++;
      else missed.push({ day: day.id, slot: g.slot, about: g.about });
    }
    const unlabelled = pile.filter((p) => p.kind !== 'clean' && !claimed.has(p)).length;
    const count = (kind: LabelledDay['kind']) => days.filter((d) => d.kind === kind).length;
    return {
      provider: llm.provider,
      model: llm.model,
      url: llm.url,
      promptVersion,
      days: { clean: count('clean'), facts: count('facts'), corrections: count('corrections') },
      failed,
      slots: [...slots.values()].sort((a, b) => a.slot.localeCompare(b.slot)),
      clean: {
        reachedPile: cleanItems.length,
        perDay: cleanDays.length === 0 ? 0 : cleanItems.length / cleanDays.length,
        daysWithItems: new Set(cleanItems.map((p) => p.day)).size,
        daysReflected: cleanDays.length,
        live: cleanLive,
        items: cleanItems.map((p) => ({
          day: p.day,
          slot: p.slot,
          text: p.text,
          attested: p.attested,
        })),
      },
      genuine: {
        labelled: labelled.length,
        found,
        recall: labelled.length === 0 ? 0 : found / labelled.length,
        foundUnattested,
        missed,
      },
      unlabelledOnOtherDays: unlabelled,
      liveAfter,
      tokens,
      durationMs: Date.now() - started,
    };
  } finally {
    await engine.close();
  }
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The report as a reader sees it: per slot, then the two figures from the labels. */
export function formatConfabulation(r: ConfabulationReport): string {
  const lines = [
    `== ${r.provider} ${r.model} (${r.url}), prompt ${r.promptVersion || '(no run)'}: ${r.days.clean} clean days, ${r.days.facts} fact days, ${r.days.corrections} correction days`,
  ];
  if (r.failed.length > 0) {
    lines.push(`reflection failed on ${r.failed.length} days:`);
    for (const f of r.failed) lines.push(`  ${f.day}: ${f.code} ${f.message.slice(0, 160)}`);
  }
  lines.push('slot                      proposed  dropped  pile  unattested  pile-from-clean-days');
  for (const s of r.slots) {
    const dropped = Object.values(s.dropped).reduce((a, b) => a + b, 0);
    lines.push(
      `${s.slot.padEnd(26)}${String(s.proposed).padStart(8)}${String(dropped).padStart(9)}${String(s.reachedPile).padStart(6)}${String(s.unattested).padStart(12)}${String(s.fromCleanDays).padStart(22)}`,
    );
    const codes = Object.entries(s.dropped).sort(([a], [b]) => a.localeCompare(b));
    if (codes.length > 0)
      lines.push(`  dropped by code: ${codes.map(([c, n]) => `${c} ${n}`).join(', ')}`);
  }
  lines.push(
    `clean days: ${r.clean.reachedPile} items reached the pile (confabulation rate ${r.clean.perDay.toFixed(2)} per clean day; ${r.clean.daysWithItems} of ${r.clean.daysReflected} days), ${r.clean.live} reached live memory`,
  );
  for (const item of r.clean.items) {
    lines.push(`  ${item.day} ${item.slot}${item.attested ? '' : ' [UNATTESTED]'}: ${item.text}`);
  }
  lines.push(
    `genuine items: ${r.genuine.found} of ${r.genuine.labelled} proposed and attested (recall ${pct(r.genuine.recall)}); ${r.genuine.foundUnattested} more in the pile unattested; ${r.genuine.missed.length} missed`,
    `other items in the pile on fact and correction days: ${r.unlabelledOnOtherDays}`,
    `live memory after the run (no owner decisions): ${r.liveAfter} facts`,
    `tokens: ${r.tokens.input} in, ${r.tokens.output} out; ${r.durationMs} ms`,
  );
  return lines.join('\n');
}
