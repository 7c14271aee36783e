import { verdictNow, type Attestation } from '../domain/attestation.js';
import { EngineError } from '../domain/errors.js';
import { pageOf } from '../domain/input.js';
import { byPassport, renderFactLine, storedVerdictDiffers } from '../domain/fact-render.js';
import { shownId } from '../domain/shown-text.js';
import { shownFact, type ArrivalManifest, type ShownLine } from '../domain/manifest.js';
import { sessionNotFound } from '../domain/session.js';
import { requireId } from '../domain/turn.js';
import { readOnlySql } from '../store/read-only-sql.js';
import { ArrivalSql, type ArrivalNow } from '../store/arrival-sql.js';
import type { ModuleDeps } from '../store/module-deps.js';
import type { TrustReader } from '../trust/trust-types.js';
import { RetractionSql } from '../store/retraction-sql.js';
import type { ArrivalApi, ArrivalConfig } from './arrival-types.js';
import {
  blockExists,
  DEFAULT_BLOCK_TIMEOUT_MS,
  runBlocks,
  type ArrivalBlock,
  type BlockContext,
} from './blocks.js';
import { hasIntegrityProblem, integrityLines, type TrustView } from '../domain/trust.js';
import { builtinBlocks, RECENT_SESSIONS, type ArrivalReader } from './builtin-blocks.js';
import { hostBlock, type HostBlockDef } from './host-blocks.js';
import { diffManifests } from './manifest.js';
import { arrivalText } from './prompt-formats.js';
import {
  messageOf,
  RELEVANT_K,
  relevantLines,
  type ArrivalRecall,
  type RecalledMemory,
  type StandingClaim,
} from './relevant-memories.js';
import { requireSurface } from './surface.js';
import { createTimeZones } from './time-zone.js';

/** What assembly is built from: the module's deps, the hash for the manifest, the config. */
export interface ArrivalApiDeps extends ModuleDeps {
  readonly sha256Hex: (text: string) => string;
  /** What live memory may show (verified against the owner's chain). */
  readonly trust: TrustReader;
  /** Recall's bounded search, for the `relevant` block (read-only). */
  readonly recall: ArrivalRecall;
  readonly config?: ArrivalConfig;
}

/** What assemble read or started for one arrival, before its blocks run. */
interface OpenedArrival {
  view: Promise<TrustView>;
  /** The `relevant` block's recall for the message (null: no message). */
  recalled: Promise<readonly RecalledMemory[]> | null;
  /** How many turns the arrival's session holds (null: no session). */
  sessionTurns: number | null;
  /** The read of settled facts, recent sessions and the clock, once a block asked (ArrivalSql.now). */
  now: Promise<ArrivalNow> | null;
}

/** Assembly and diff for one subject at a time, over one engine-wide list of blocks. */
export interface ArrivalAssembler {
  /** The arrival API of one (existing) subject. */
  forSubject(subjectId: string): ArrivalApi;
  /** Adds a host block to every arrival; BLOCK_EXISTS when a block already has its name. */
  addBlock(def: HostBlockDef): void;
  /** A subject's time zone (the default when it has none). */
  timeZoneOf(subjectId: string): Promise<string>;
}

const DEFAULT_MANIFEST_PAGE = 20;

/** At most this many pending verdicts are read again per arrival, over this much turn text. */
const PILE_RECHECK_MAX = 32;
const PILE_RECHECK_CHARS = 2_000_000;

function manifestIdOf(id: unknown): string {
  if (typeof id !== 'string' || id === '') {
    throw new EngineError('INVALID_ARGUMENT', 'name the arrival by its manifest id', {
      data: { field: 'manifestId' },
    });
  }
  return id;
}

/** Joins the blocks in before the first token and records what was given (the manifest). */
export function createArrivalApi(deps: ArrivalApiDeps): ArrivalAssembler {
  const { client, clock, newId } = deps;
  const sql = new ArrivalSql(client);
  const retractions = new RetractionSql(client);
  const config = deps.config ?? {};
  const zones = createTimeZones(
    sql,
    () => config.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
  );
  const reads = readOnlySql(client);
  const readOnly = async (q: string, p: readonly unknown[]) => (await reads.query(q, p)).rows;

  // What assemble read or started for an arrival, shared by its blocks.
  const opened = new WeakMap<BlockContext, OpenedArrival>();
  const openedOf = (ctx: BlockContext): OpenedArrival => {
    let o = opened.get(ctx);
    if (o === undefined) {
      o = { view: deps.trust.view(ctx.subjectId), recalled: null, sessionTurns: null, now: null };
      opened.set(ctx, o);
    }
    return o;
  };
  // One trust view per arrival, shared by the blocks that read it (live facts, integrity,
  // relevant).
  const viewOf = (ctx: BlockContext): Promise<TrustView> => openedOf(ctx).view;
  // The settled facts, recent sessions and clock of an arrival: one read, shared by three blocks.
  /** A stored verdict as storedVerdictDiffers reads it (its reason plays no part). */
  const storedAttestation = (v: string | null) =>
    v === null ? null : ({ verdict: v, reason: '' } as Attestation);
  // The pile line's verdicts, read again from the stored quotes and turns as the review page reads
  // them. Each proposal's is kept under its row version and its turn's; the whole pile's while
  // the pile's mark is the same. An arrival reads at most PILE_RECHECK_MAX of them again, and at
  // most PILE_RECHECK_CHARS of turn text: the rest wait for the next arrival, counted as such.
  const checkedPiles = new Map<
    string,
    { mark: string; verdicts: Record<string, number>; differing: number }
  >();
  // per subject: each pending proposal's verdict, under its key (ArrivalSql.pendingQuotes)
  const checkedQuotes = new Map<string, Map<string, { verdict: string; differs: boolean }>>();
  const pileVerdicts = async (
    subjectId: string,
    mark: string | null,
  ): Promise<{ verdicts: Record<string, number>; differing: number }> => {
    const whole = checkedPiles.get(subjectId);
    if (whole !== undefined && mark !== null && whole.mark === mark) return whole;
    let kept = checkedQuotes.get(subjectId);
    if (kept === undefined) {
      if (checkedQuotes.size >= 10_000) checkedQuotes.clear();
      checkedQuotes.set(subjectId, (kept = new Map()));
    }
    const { mark: read, items } = await sql.pendingQuotes(subjectId, [...kept.keys()]);
    // what is not pending any more is not kept
    const pending = new Set(items.map((p) => p.key));
    for (const key of kept.keys()) if (!pending.has(key)) kept.delete(key);
    const verdicts: Record<string, number> = {};
    let differing = 0;
    let rechecked = 0;
    let chars = 0;
    let complete = true;
    for (const p of items) {
      let v = kept.get(p.key);
      const content = p.cited?.content ?? null;
      if (v === undefined && content === null && p.cited !== null) {
        // its words were not sent (known when asked, dropped since): read it next time
        complete = false;
      } else if (v === undefined) {
        if (rechecked >= PILE_RECHECK_MAX || chars > PILE_RECHECK_CHARS) {
          complete = false;
        } else {
          rechecked++;
          chars += content?.length ?? 0;
          const cited = p.cited === null || content === null ? null : { ...p.cited, content };
          const now = verdictNow(p, cited);
          // a quoted claim whose quote cannot be read again (its turn gone, not the user's, or
          // no quote) never left the gate that way: its stored verdict is not trusted either
          const unreadable = now === null && p.origin !== 'did' && p.origin !== 'summarized';
          const asStored = { attested: p.attested, attestation: storedAttestation(p.stored) };
          v = {
            verdict: unreadable
              ? 'unverifiable'
              : (now?.verdict ?? p.stored ?? (p.attested ? 'attested' : 'unattested')),
            differs: unreadable || storedVerdictDiffers(asStored, now) !== null,
          };
          kept.set(p.key, v);
        }
      }
      const label = v?.verdict ?? 'not re-checked yet';
      verdicts[label] = (verdicts[label] ?? 0) + 1;
      if (v?.differs === true) differing++;
    }
    const checked = { verdicts, differing };
    if (read !== null && complete) {
      if (checkedPiles.size >= 10_000) checkedPiles.clear();
      checkedPiles.set(subjectId, { mark: read, ...checked });
    }
    return checked;
  };
  const nowOf = (ctx: BlockContext): Promise<ArrivalNow> => {
    const o = openedOf(ctx);
    o.now ??= sql.now(ctx.subjectId, ctx.sessionId, ctx.now, ctx.timeZone, RECENT_SESSIONS);
    return o.now;
  };
  /** The settled-facts block's retractions: the newest, of the 12 read, that settle something. */
  const RECENT_RETRACTIONS = 3;
  /**
   * A disputed fact's mark: the retractions that name it, at most two. An id is the store's and
   * could hold anything ("]" and words of its own): one that is not an id is not shown.
   */
  const disputedMark = (ids: readonly string[]): string => {
    const named = ids.slice(0, 2).map(shownId).join(', ');
    const more = ids.length > 2 ? ` and ${ids.length - 2} more` : '';
    return `[disputed: retraction ${named}${more} awaits the owner's signature]`;
  };
  // Made once per kept trust view, which serves many arrivals: the live_facts block's lines (by
  // limit and zone), and the standing retractions (the verifier keeps a view only while the
  // subject's ledger rows are the row versions it was built from: TrustSql's ledger mark).
  const factLines = new WeakMap<TrustView, Map<string, readonly ShownLine[]>>();
  const claimsOf = new WeakMap<TrustView, Promise<readonly StandingClaim[]>>();
  const reader: ArrivalReader = {
    async liveFactLines(ctx, limit) {
      const view = await viewOf(ctx);
      // rendered once per view, zone and limit: a kept view serves many arrivals
      let byZone = factLines.get(view);
      if (byZone === undefined) factLines.set(view, (byZone = new Map()));
      const key = `${limit}\u0000${ctx.timeZone}`;
      let lines = byZone.get(key);
      if (lines === undefined) {
        // did and saw lines first: inferred and summarized ones never outrank them
        // a fact an unsigned retraction names stays live until the owner signs it, marked so
        const disputed = new Map(view.disputed.map((d) => [d.factId, d.retractions]));
        lines = byPassport(view.live.slice(-limit)).map((f) => {
          const by = disputed.get(f.id);
          const line = renderFactLine(f, ctx.timeZone);
          return shownFact(f, by === undefined ? line : `${line} ${disputedMark(by)}`);
        });
        byZone.set(key, lines);
      }
      return { lines: [...lines], total: view.live.length };
    },
    async integrity(ctx) {
      const view = await viewOf(ctx);
      return { lines: integrityLines(view), problem: hasIntegrityProblem(view) };
    },
    relevantLines: (ctx, message, limit) =>
      relevantLines(ctx, message, limit, {
        // the recall assemble started for this arrival's message, or a new one
        recall: (subjectId, query, options) =>
          (limit === RELEVANT_K ? opened.get(ctx)?.recalled : null) ??
          deps.recall(subjectId, query, options),
        view: viewOf(ctx),
        retracted: (s, view) => {
          let claims = claimsOf.get(view);
          if (claims === undefined) {
            claims = retractions.standingClaims(s);
            claimsOf.set(view, claims);
            claims.catch(() => claimsOf.delete(view));
          }
          return claims;
        },
      }),
    recentSessions: async (ctx) => (await nowOf(ctx)).recent,
    // as assemble read it when it checked the session
    sessionTurns: (ctx) => opened.get(ctx)?.sessionTurns ?? null,
    settled: async (ctx) => {
      const now = await nowOf(ctx);
      // a retraction of an approved fact the owner has not signed settles nothing: it is shown as
      // the fact's dispute, never as a correction to repeat (nor is a forged one)
      const unsigned = new Set((await viewOf(ctx)).unsignedRetractions);
      const s = {
        ...now.settled,
        retractions: now.settled.retractions
          .filter((r) => !unsigned.has(r.id ?? ''))
          .slice(0, RECENT_RETRACTIONS),
      };
      if (s.pile.count === 0) return s;
      const checked = await pileVerdicts(ctx.subjectId, now.pileMark);
      return { ...s, pile: { ...s.pile, ...checked } };
    },
    formatTime: async (ctx) => (await nowOf(ctx)).clock,
  };

  const blocks: ArrivalBlock[] = builtinBlocks(reader, {
    identity: config.identity ?? null,
    timeoutMs: config.blockTimeoutMs ?? DEFAULT_BLOCK_TIMEOUT_MS,
  });
  const addBlock = (def: HostBlockDef): void => {
    const block = hostBlock(def, readOnly);
    if (blocks.some((b) => b.name === block.name)) throw blockExists(block.name);
    blocks.push(block);
  };
  for (const def of config.blocks ?? []) addBlock(def);

  const forSubject = (subjectId: string): ArrivalApi => ({
    async assemble(input) {
      const surface = requireSurface(input.surface);
      // checked before anything is read; never stored (the host records the turn)
      const message = messageOf(input.message);
      const sessionId =
        input.sessionId === undefined ? null : requireId(input.sessionId, 'session');
      // the relevant block's recall is the longest read with a message: it starts first, so its
      // statement is the first one sent (it only reads; if the session turns out not to be the
      // subject's, it is dropped). It awaits the view below only once its first read is sent.
      let viewStarted: (view: Promise<TrustView>) => void = () => undefined;
      const recalled =
        message === null
          ? null
          : deps.recall(subjectId, message, {
              k: RELEVANT_K,
              exceptSession: sessionId,
              view: new Promise<TrustView>((resolve) => (viewStarted = resolve)),
            });
      recalled?.catch(() => undefined);
      // the opening read carries the server's snapshot: the trust view, the longest read
      // without a message, starts now beside the others and checks whether anything was
      // written since the view it keeps against that snapshot, with no statement of its own (a
      // failure of it shows as degraded blocks, never as an unhandled rejection)
      const openingRead = sql.opening(subjectId, surface, sessionId);
      const taken = openingRead.then((o) => o.snapshot);
      taken.catch(() => undefined);
      const view = deps.trust.view(subjectId, taken);
      view.catch(() => undefined);
      viewStarted(view);
      const opening = await openingRead;
      if (sessionId !== null && opening.sessionTurns === null) throw sessionNotFound(sessionId);
      const bound = opening.tools;
      const timeZone = zones.orDefault(opening.zone);
      const now = clock();
      const ctx: BlockContext = {
        subjectId,
        sessionId,
        surface,
        message,
        now,
        timeZone,
        tools: bound,
      };
      opened.set(ctx, { view, recalled, sessionTurns: opening.sessionTurns, now: null });
      const rendered = await runBlocks(blocks, ctx, deps.sha256Hex);
      // the chain head this arrival saw: a later chain without it was cut
      const seen = await viewOf(ctx).then(
        (v) => v.chain,
        () => null,
      );
      const text = arrivalText(rendered);
      const manifest: ArrivalManifest = {
        id: newId(),
        subjectId,
        surface,
        sessionId,
        blocks: rendered.map((b) => ({
          name: b.name,
          tier: b.tier,
          sha256: b.sha256,
          degraded: b.degraded,
          chars: b.text.length,
        })),
        tools: bound,
        toolCount: bound.length,
        degraded: rendered.filter((b) => b.degraded).map((b) => b.name),
        totalChars: text.length,
        createdAt: now,
        chain:
          seen === null || seen.verified === 0
            ? null
            : { length: seen.verified, head: seen.headHash },
      };
      // the manifest's own transaction on the engine's client (ArrivalSql.recordManifest), which
      // changes nothing a trust view reads (ModuleDeps.wroteNeutral)
      deps.wroteNeutral?.(await sql.recordManifest(manifest));
      return {
        manifestId: manifest.id,
        subjectId,
        sessionId,
        surface,
        blocks: rendered,
        tools: bound,
        text,
        memories: rendered.flatMap((b) => b.shown),
      };
    },
    async diff(input) {
      let target: ArrivalManifest | null;
      if ('manifestId' in input && input.manifestId !== undefined) {
        const id = manifestIdOf(input.manifestId);
        target = await sql.manifest(subjectId, id);
        if (target === null) throw new EngineError('MANIFEST_NOT_FOUND', `no arrival "${id}"`);
      } else {
        if (!('surface' in input) || input.surface === undefined) {
          throw new EngineError('INVALID_ARGUMENT', 'name an arrival id or a surface', {
            data: { field: 'manifestId' },
          });
        }
        const surface = requireSurface(input.surface);
        target = await sql.previousManifest(subjectId, surface, null);
        if (target === null) {
          throw new EngineError('MANIFEST_NOT_FOUND', `no arrival on surface "${surface}" yet`);
        }
      }
      return diffManifests(await sql.previousManifest(subjectId, target.surface, target), target);
    },
    async manifests(options = {}) {
      const surface = options.surface === undefined ? null : requireSurface(options.surface);
      return sql.manifests(subjectId, surface, pageOf(options, DEFAULT_MANIFEST_PAGE));
    },
    timeZone: () => zones.of(subjectId),
    setTimeZone: (zone) => zones.set(subjectId, zone),
  });

  return { forSubject, addBlock, timeZoneOf: (subjectId) => zones.of(subjectId) };
}
