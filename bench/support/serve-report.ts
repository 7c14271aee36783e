/**
 * bench:serve's printed report: the per-route tables of the three runs (saturation, paced,
 * baseline), what the saturation run's latency is made of, whether the paced run paced, the
 * queueing comparison, and the targets (judged on the paced run).
 */
import type { BenchKind } from '../../eval/bench-store.js';
import type { RouteResult, RunResult } from './serve-load.js';
import { ROUTES, type Route } from './serve-mix.js';

/** issue 13: recall and arrival p95 at most this on PostgreSQL under the full load. */
export const TARGET_P95_MS = 30;
/** The routes the p95 target names. */
export const TARGET_ROUTES: readonly Route[] = ['recall', 'arrival'];

/** What one engine's runs came to. */
export interface EngineRun {
  engine: BenchKind;
  /** How the server reaches its store, in words. */
  connectionsToStore: string;
  poolSize: number;
  seedMs: number;
  /** Closed loop at N connections: the most the server answers; latency there is queueing. */
  saturation: RunResult;
  /** The same N connections and mix at a fixed offered rate: the run the p95 target is judged on. */
  paced: RunResult;
  /** The same mix from one connection (null when --baseline-duration 0). */
  single: RunResult | null;
  /** Internal-error lines the server wrote on stderr during the runs. */
  serverErrors: string[];
}

export interface TargetCheck {
  what: string;
  value: number;
  limit: number;
  met: boolean;
}

/** A paced run whose sent rate falls below this share of the offered one did not keep pace. */
export const MIN_PACE = 0.95;

export type RunKind = 'saturation' | 'paced' | 'baseline';

/** One run's checks: 0 errors (every run); the p95s on PostgreSQL at N; the pace, if paced. */
export function runChecks(engine: BenchKind, kind: RunKind, run: RunResult): TargetCheck[] {
  const bad = run.total.errors + run.total.lost;
  const checks: TargetCheck[] = [{ what: 'errors', value: bad, limit: 0, met: bad === 0 }];
  if (run.pacing !== null) {
    const share = run.sentRps / run.pacing.offeredRps;
    checks.push({
      what: 'sent/offered %',
      value: round(100 * share),
      limit: 100 * MIN_PACE,
      met: share >= MIN_PACE,
    });
  }
  if (engine === 'postgres' && kind !== 'baseline') {
    for (const route of TARGET_ROUTES) {
      const p95 = run.routes[route].latency.p95;
      checks.push({
        what: `${route} p95 ms`,
        value: round(p95),
        limit: TARGET_P95_MS,
        met: p95 <= TARGET_P95_MS,
      });
    }
  }
  return checks;
}

export interface EngineTargets {
  saturation: TargetCheck[];
  paced: TargetCheck[];
  baseline: TargetCheck[] | null;
  /** The verdict: every check of the paced run, and 0 errors in every run. */
  met: boolean;
}

/** The issue's targets for one engine: 0 errors everywhere; the p95s on PostgreSQL only. */
export function targetChecks(r: EngineRun): EngineTargets {
  const saturation = runChecks(r.engine, 'saturation', r.saturation);
  const paced = runChecks(r.engine, 'paced', r.paced);
  const baseline = r.single === null ? null : runChecks(r.engine, 'baseline', r.single);
  const errorsOk = (cs: TargetCheck[] | null): boolean =>
    cs === null || cs.every((c) => c.what !== 'errors' || c.met);
  const met = paced.every((c) => c.met) && errorsOk(saturation) && errorsOk(baseline);
  return { saturation, paced, baseline, met };
}

/** Per route at N connections against one: what the waiting costs. */
export interface QueueingRow {
  route: Route;
  p50At1: number;
  p95At1: number;
  p50AtN: number;
  p95AtN: number;
  /** p50 at N minus p50 at 1: the time a request spends waiting, at the median. */
  waitP50: number;
  p95Ratio: number;
}

export interface Queueing {
  connections: number;
  rpsAt1: number;
  rpsAtN: number;
  /** rpsAtN / rpsAt1: 1 when extra connections only wait, up to N when they all run at once. */
  throughputGain: number;
  /** Little's law: N requests always in flight at rpsAtN take N / rpsAtN each, on average. */
  littleMeanMs: number;
  measuredMeanMs: number;
  rows: QueueingRow[];
}

export function queueing(main: RunResult, single: RunResult): Queueing {
  const rows = ROUTES.map((route): QueueingRow => {
    const a = single.routes[route].latency;
    const b = main.routes[route].latency;
    return {
      route,
      p50At1: round(a.p50),
      p95At1: round(a.p95),
      p50AtN: round(b.p50),
      p95AtN: round(b.p95),
      waitP50: round(b.p50 - a.p50),
      p95Ratio: round(b.p95 / a.p95),
    };
  });
  return {
    connections: main.connections,
    rpsAt1: round(single.rps),
    rpsAtN: round(main.rps),
    throughputGain: round(main.rps / single.rps),
    littleMeanMs: round((1000 * main.connections) / main.rps),
    measuredMeanMs: round(main.total.latency.mean),
    rows,
  };
}

export const round = (x: number): number => Math.round(x * 10) / 10;
const ms = (x: number, w = 7): string => (Number.isFinite(x) ? x.toFixed(1) : '-').padStart(w);
const int = (n: number): string => n.toLocaleString('en-US');
const counts = (o: Record<string, number>): string =>
  Object.entries(o)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${int(v)}`)
    .join(', ');

function routeLine(
  engine: string,
  run: string,
  conns: string,
  route: string,
  r: RouteResult,
): string {
  const l = r.latency;
  return (
    `${engine.padEnd(9)}${run.padEnd(13)}${conns.padStart(5)}  ${route.padEnd(8)}${int(r.count).padStart(9)}` +
    `${ms(l.p50, 8)}${ms(l.p95, 8)}${ms(l.p99, 8)}${ms(l.max, 8)}${int(r.errors).padStart(8)}`
  );
}

/** A run's name in the table: saturation, paced R/s, baseline. */
export function runName(kind: RunKind, run: RunResult): string {
  return kind === 'paced' && run.pacing !== null ? `paced ${run.pacing.offeredRps}/s` : kind;
}

/** The per-route table of one run. */
export function runLines(engine: string, kind: RunKind, run: RunResult): string[] {
  const lines: string[] = [];
  for (const [i, route] of ROUTES.entries()) {
    lines.push(
      routeLine(
        i === 0 ? engine : '',
        i === 0 ? runName(kind, run) : '',
        i === 0 ? String(run.connections) : '',
        route,
        run.routes[route],
      ),
    );
  }
  const t = run.total;
  const all = {
    count: t.count,
    latency: t.latency,
    errors: t.errors,
  } as RouteResult;
  lines.push(
    `${routeLine('', '', '', 'all', all)}   ${int(Math.round(run.rps))} req/s over ${run.durationS.toFixed(1)} s` +
      (t.lost > 0 ? `; ${int(t.lost)} requests LOST (never answered)` : ''),
  );
  return lines;
}

export const TABLE_HEADER =
  `${'engine'.padEnd(9)}${'run'.padEnd(13)}${'conns'.padStart(5)}  ${'route'.padEnd(8)}${'requests'.padStart(9)}` +
  `${'p50 ms'.padStart(8)}${'p95 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}${'errors'.padStart(8)}`;

/** The saturation run in one line: its latency is what Little's law says N in flight must wait. */
export function saturationLine(r: EngineRun): string {
  const m = r.saturation;
  const little = (1000 * m.connections) / m.rps;
  return (
    `${r.engine} saturation: closed loop, ${m.connections} connections, ${int(Math.round(m.rps))} req/s; ` +
    `its latency is queueing: ${m.connections} in flight / ${int(Math.round(m.rps))} req/s = ` +
    `${little.toFixed(1)} ms mean by Little's law, ${m.total.latency.mean.toFixed(1)} ms measured`
  );
}

/** Whether the paced run paced: offered against sent and answered, and how evenly it sent. */
export function pacedLines(r: EngineRun): string[] {
  const m = r.paced;
  const p = m.pacing;
  if (p === null) return [];
  const quota = p.quota.min === p.quota.max ? `${p.quota.min}` : `${p.quota.min}-${p.quota.max}`;
  const asked = r.saturation.connections;
  return [
    `${r.engine} paced: offered ${p.offeredRps} req/s, sent ${m.sentRps.toFixed(1)} ` +
      `(${((100 * m.sentRps) / p.offeredRps).toFixed(1)}%), answered ${m.rps.toFixed(1)} req/s; ` +
      `${m.connections} connections${m.connections < asked ? ` (autocannon cut ${asked} to ${m.connections}: rate < connections)` : ''}, ` +
      `${quota} requests each per ${p.windowS} s window, windows ${p.windows}`,
    `  in flight: mean ${m.inFlight.mean.toFixed(1)}, peak ${m.inFlight.peak}; ` +
      `requests sent per 100 ms: mean ${m.sendsPer100ms.mean.toFixed(1)}, busiest ${m.sendsPer100ms.max}` +
      (m.sentRps < MIN_PACE * p.offeredRps
        ? `; RATE NOT MET: the server answered slower than offered, and what the quota held back was never sent, so these latencies understate`
        : ''),
  ];
}

/** What came back besides latency: outcomes, error codes, and whether the totals agree. */
export function detailLines(r: EngineRun): string[] {
  const m = r.saturation;
  const lines: string[] = [`${r.engine}, saturation run:`];
  const p = m.routes.propose.proposals;
  if (p !== undefined) {
    lines.push(
      `  propose: ${int(p.proposed)} proposals to the pile; dropped: ${counts(p.dropped) || 'none'}`,
    );
  }
  const d = m.routes.arrival.degraded;
  if (d !== undefined) {
    lines.push(
      `  arrival: ${int(d.arrivals)} of ${int(m.routes.arrival.count)} had a degraded block` +
        (d.arrivals > 0 ? ` (${counts(d.blocks)})` : ''),
    );
  }
  lines.push(
    `  recall: ${(m.routes.recall.meanItems ?? 0).toFixed(1)} items per answer on average`,
  );
  const runs: Array<[RunKind, RunResult | null]> = [
    ['saturation', r.saturation],
    ['paced', r.paced],
    ['baseline', r.single],
  ];
  for (const [kind, run] of runs) {
    if (run === null) continue;
    for (const route of ROUTES) {
      const x = run.routes[route];
      if (x.errors === 0) continue;
      lines.push(
        `  ${kind} ${route} errors: ${counts(x.non2xx) || 'no non-2xx'}; codes ${counts(x.errorCodes) || '-'}; ` +
          `timeouts ${x.timeouts}; socket errors ${x.socketErrors}` +
          (x.firstError === null ? '' : `; first: ${x.firstError}`),
      );
    }
    const ac = run.autocannon;
    if (ac.responses !== run.total.count) {
      lines.push(
        `  note (${kind}): autocannon counted ${int(ac.responses)} responses, the per-route tallies ${int(run.total.count)}`,
      );
    }
  }
  for (const e of r.serverErrors.slice(0, 3)) lines.push(`  server stderr: ${e.slice(0, 300)}`);
  return lines;
}

/** The comparison with one connection: what queueing costs. */
export function queueingLines(r: EngineRun, q: Queueing): string[] {
  const lines = [
    `${r.engine}: the same mix from 1 connection vs ${q.connections} (${r.connectionsToStore})`,
    `  ${'route'.padEnd(8)}${'p50@1'.padStart(8)}${'p95@1'.padStart(8)}${`p50@${q.connections}`.padStart(9)}` +
      `${`p95@${q.connections}`.padStart(9)}${'wait p50'.padStart(10)}${'p95 x'.padStart(7)}`,
  ];
  for (const row of q.rows) {
    lines.push(
      `  ${row.route.padEnd(8)}${ms(row.p50At1, 8)}${ms(row.p95At1, 8)}${ms(row.p50AtN, 9)}` +
        `${ms(row.p95AtN, 9)}${ms(row.waitP50, 10)}${ms(row.p95Ratio, 7)}`,
    );
  }
  lines.push(
    `  throughput ${int(Math.round(q.rpsAt1))} req/s from 1 connection, ${int(Math.round(q.rpsAtN))} from ` +
      `${q.connections} (x${q.throughputGain.toFixed(1)}); mean latency at ${q.connections}: ` +
      `${q.measuredMeanMs.toFixed(1)} ms measured, ${q.littleMeanMs.toFixed(1)} ms by Little's law ` +
      `(${q.connections} in flight / throughput)`,
  );
  return lines;
}

/** How to read the comparison, once. */
export const QUEUEING_NOTE = [
  'How to read "1 connection vs N": from 1 connection each request has the server to itself, so',
  'p50@1 is its service time. When the store runs one query at a time (PGlite), more connections',
  'cannot add throughput (x close to 1): they only queue, and "wait p50" (p50@N - p50@1) is the',
  'median time a request spent waiting for the store. A pool that runs queries side by side',
  '(PostgreSQL) gains throughput until the pool, the CPU or locks are the limit.',
];

const checkText = (cs: TargetCheck[]): string =>
  cs
    .map((c) => {
      const target =
        c.what === 'errors' ? '0' : c.what.endsWith('%') ? `>= ${c.limit}` : `<= ${c.limit}`;
      return `${c.what} ${c.value} (target ${target}): ${c.met ? 'met' : 'MISSED'}`;
    })
    .join('; ');

/** The targets of one engine: the paced run (the verdict), then the others, then the verdict. */
export function targetLines(r: EngineRun): string[] {
  const t = targetChecks(r);
  const lines = [
    `${r.engine} ${runName('paced', r.paced)}: ${checkText(t.paced)}`,
    `${r.engine} saturation (latency there is queueing, shown, not judged): ${checkText(t.saturation)}`,
  ];
  if (t.baseline !== null) lines.push(`${r.engine} baseline: ${checkText(t.baseline)}`);
  lines.push(
    `${r.engine}: ${t.met ? 'MET' : 'NOT MET'} (every check of the paced run, 0 errors in every run)`,
  );
  return lines;
}
