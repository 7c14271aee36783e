import type { Fact, FactId, ForgetRequest, Retraction, SubjectHandle } from '../../src/index.js';
import { isoDay } from '../../src/rules.js';
import type { ChainState } from './views/chain-view.js';
import { pageOf } from './views/layout.js';
import type { LiveItem } from './views/memory-view.js';
import type { PileItem, PileNight } from './views/pile-view.js';

/** What each view reads, through the subject handle only: the page calls the engine API. */

/**
 * Retractions that wait for the owner's signature: ledger rows (not overturned) naming a fact
 * that is still live, the fact the owner approved, which the row only disputes until signed.
 */
export async function pendingRetractions(
  me: SubjectHandle,
): Promise<Array<{ retraction: Retraction; fact: Fact }>> {
  const rows = (await me.ledger.list()).filter(
    (r) => r.factId !== null && r.verdict !== 'overturned',
  );
  const out: Array<{ retraction: Retraction; fact: Fact }> = [];
  for (const r of rows) {
    const fact = await me.facts
      .get(r.factId as NonNullable<Retraction['factId']>)
      .catch(() => null);
    if (fact !== null && fact.status === 'active' && fact.integrity === undefined) {
      out.push({ retraction: r, fact });
    }
  }
  return out;
}

export async function pileNights(
  me: SubjectHandle,
  page: number,
  size: number,
  timeZone: string,
): Promise<{ nights: PileNight[]; total: number; page: number; pages: number }> {
  const total = await me.gate.pileCount();
  const pages = Math.max(1, Math.ceil(total / size));
  const p = Math.min(Math.max(1, page), pages);
  const pending = await me.gate.pile({ limit: size, offset: (p - 1) * size });
  const shown = { items: pending, page: p, pages };
  const live = shown.items.some((p) => p.fact.key !== null) ? await me.facts.live() : [];
  const names = shown.items.some((p) => p.fact.proposedBy.startsWith('agent:'))
    ? new Map((await me.owner.tokens()).map((t) => [t.id, t.name]))
    : new Map<string, string | null>();
  const items: PileItem[] = [];
  for (const { fact, citedTurn, verdictNow } of shown.items) {
    const citations = fact.evidence.citations ?? null;
    // a summary: every turn it cites, which the owner reads its sentences against
    const context =
      citations !== null
        ? (
            await Promise.all(
              citations.map(async (c) =>
                // only the very turn cited: a citation whose id and place disagree shows nothing
                (await me.history.turns(c.session, { from: c.seq, to: c.seq })).filter(
                  (t) => t.id === c.turn,
                ),
              ),
            )
          ).flat()
        : citedTurn === null
          ? []
          : await me.history.turns(citedTurn.sessionId, {
              from: Math.max(1, citedTurn.seq - 1),
              to: citedTurn.seq + 1,
            });
    const replacesLive =
      fact.key === null
        ? null
        : (live.find((f) => f.slot === fact.slot && f.key === fact.key) ?? null);
    items.push({
      fact,
      citedTurn,
      context,
      replacesLive,
      verdictNow,
      proposer: proposerName(fact.proposedBy, names),
    });
  }
  const nights: PileNight[] = [];
  for (const item of items) {
    const day = isoDay(item.fact.recordedAt, timeZone);
    const night = nights.find((n) => n.day === day);
    if (night === undefined) nights.push({ day, items: [item] });
    else night.items.push(item);
  }
  return { nights, total, page: shown.page, pages: shown.pages };
}

/**
 * Who proposed, as the owner named them: a token's proposals (`agent:<token id>`) by the token's
 * name, with its id; anything else as recorded.
 */
export function proposerName(
  proposedBy: string,
  names: ReadonlyMap<string, string | null>,
): string {
  if (!proposedBy.startsWith('agent:')) return proposedBy;
  const id = proposedBy.slice('agent:'.length);
  const name = names.get(id);
  return name === undefined || name === null ? proposedBy : `the agent token “${name}” (${id})`;
}

/** How many pending forget requests the pile shows (the oldest beyond it wait their turn). */
const FORGET_REQUESTS_SHOWN = 100;

/** The agents' pending forget requests, newest first, each with who filed it, in words. */
export async function pendingForgets(
  me: SubjectHandle,
): Promise<Array<{ request: ForgetRequest; requester: string }>> {
  const requests = await me.gate.forgetRequests({
    status: 'pending',
    limit: FORGET_REQUESTS_SHOWN,
  });
  const names = requests.some((r) => r.requestedBy.startsWith('agent:'))
    ? new Map((await me.owner.tokens()).map((t) => [t.id, t.name]))
    : new Map<string, string | null>();
  return requests.map((request) => ({
    request,
    requester: proposerName(request.requestedBy, names),
  }));
}

/** The proposal an owner's edit replaced (proposedBy `owner (edit of <id>)`), or null. */
export function editedFrom(fact: Fact): string | null {
  return /^owner \(edit of (.+)\)$/.exec(fact.proposedBy)?.[1] ?? null;
}

/** Live facts of a slot (or all), each with the values it superseded, newest first. */
export async function liveMemory(
  me: SubjectHandle,
  slot: string | null,
  page: number,
  size: number,
): Promise<{ items: LiveItem[]; total: number; page: number; pages: number }> {
  const live = (await me.facts.live()).filter((f) => slot === null || f.slot === slot);
  const shown = pageOf(live, page, size);
  const needLineage = shown.items.some((f) => f.supersedesId !== null);
  const all = needLineage ? new Map((await me.facts.all()).map((f) => [f.id, f])) : new Map();
  const items: LiveItem[] = shown.items.map((fact) => {
    const lineage: Fact[] = [];
    const seen = new Set<string>([fact.id]);
    for (let id = fact.supersedesId; id !== null && !seen.has(id);) {
      seen.add(id);
      const old = all.get(id) as Fact | undefined;
      if (old === undefined) break;
      lineage.push(old);
      id = old.supersedesId;
    }
    return { fact, lineage };
  });
  // an edited approval's first value: the proposal whose words the owner changed
  for (const item of items) {
    const original = editedFrom(item.fact);
    if (original === null) continue;
    const fact = await me.facts.get(original as FactId).catch(() => null);
    if (fact !== null) item.editedFrom = fact;
  }
  return { items, total: live.length, page: shown.page, pages: shown.pages };
}

/** The retraction ledger with the due falsifiers first. */
export async function ledgerItems(me: SubjectHandle, page: number, size: number) {
  const [all, due] = await Promise.all([me.ledger.list(), me.ledger.due()]);
  const dueIds = new Set(due.map((r) => r.id));
  const ordered = [
    ...due.map((retraction) => ({ retraction, due: true })),
    ...all.filter((r) => !dueIds.has(r.id)).map((retraction) => ({ retraction, due: false })),
  ];
  const shown = pageOf(ordered, page, size);
  return { ...shown, total: all.length, dueCount: due.length };
}

/** Arrivals of a surface (or all), newest first, each with its diff against the previous. */
export async function arrivalItems(
  me: SubjectHandle,
  surface: string | null,
  page: number,
  size: number,
) {
  const count = await me.arrival.manifests({
    limit: 1,
    ...(surface === null ? {} : { surface }),
  });
  const pages = Math.max(1, Math.ceil(count.total / size));
  const p = Math.min(Math.max(1, page), pages);
  const { total, manifests } = await me.arrival.manifests({
    limit: size,
    offset: (p - 1) * size,
    ...(surface === null ? {} : { surface }),
  });
  const items = await Promise.all(
    manifests.map(async (manifest) => ({
      manifest,
      diff: await me.arrival.diff({ manifestId: manifest.id }).catch(() => null),
    })),
  );
  return { items, total, page: p, pages };
}

/** The chain as `chain verify` checks it, when the server has no anchor of its own to offer. */
export async function unanchoredChain(me: SubjectHandle): Promise<ChainState> {
  return {
    report: await me.owner.verifyChain(),
    anchored: false,
    anchor: "checked against the store's own copy of the owner public key",
    signedHead: null,
  };
}

/** The first day of the dropped chart: `days` days back from today, in the zone. */
export function chartDays(
  now: Date,
  days: number,
  timeZone: string,
): { first: string; last: string } {
  return {
    first: isoDay(new Date(now.getTime() - (days - 1) * 86_400_000), timeZone),
    last: isoDay(now, timeZone),
  };
}
