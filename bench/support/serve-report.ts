/** bench:serve's printed report: the per-route tables, the queueing comparison, the targets. */
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
  main: RunResult;
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

/** The issue's targets for one engine: 0 errors everywhere; the p95s on PostgreSQL only. */
export function targetChecks(r: EngineRun): TargetCheck[] {
  const lost = r.main.total.lost;
  const checks: TargetCheck[] = [
    {
      what: 'errors',
      value: r.main.total.errors + lost,
      limit: 0,
      met: r.main.total.errors + lost === 0,
    },
  ];
  if (r.engine === 'postgres') {
    for (const route of TARGET_ROUTES) {
      const p95 = r.main.routes[route].latency.p95;
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

function routeLine(engine: string, conns: string, route: string, r: RouteResult): string {
  const l = r.latency;
  return (
    `${engine.padEnd(9)}${conns.padStart(5)}  ${route.padEnd(8)}${int(r.count).padStart(9)}` +
    `${ms(l.p50, 8)}${ms(l.p95, 8)}${ms(l.p99, 8)}${ms(l.max, 8)}${int(r.errors).padStart(8)}`
  );
}

/** The per-route table of one run. */
export function runLines(engine: string, run: RunResult): string[] {
  const lines: string[] = [];
  for (const [i, route] of ROUTES.entries()) {
    lines.push(
      routeLine(
        i === 0 ? engine : '',
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
    `${routeLine('', '', 'all', all)}   ${int(Math.round(run.rps))} req/s over ${run.durationS.toFixed(1)} s` +
      (t.lost > 0 ? `; ${int(t.lost)} requests LOST (never answered)` : ''),
  );
  return lines;
}

export const TABLE_HEADER =
  `${'engine'.padEnd(9)}${'conns'.padStart(5)}  ${'route'.padEnd(8)}${'requests'.padStart(9)}` +
  `${'p50 ms'.padStart(8)}${'p95 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}${'errors'.padStart(8)}`;

/** What came back besides latency: outcomes, error codes, and whether the totals agree. */
export function detailLines(r: EngineRun): string[] {
  const m = r.main;
  const lines: string[] = [`${r.engine}, ${m.connections} connections:`];
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
  for (const route of ROUTES) {
    const x = m.routes[route];
    if (x.errors === 0) continue;
    lines.push(
      `  ${route} errors: ${counts(x.non2xx) || 'no non-2xx'}; codes ${counts(x.errorCodes) || '-'}; ` +
        `timeouts ${x.timeouts}; socket errors ${x.socketErrors}` +
        (x.firstError === null ? '' : `; first: ${x.firstError}`),
    );
  }
  const ac = m.autocannon;
  if (ac.responses !== m.total.count) {
    lines.push(
      `  note: autocannon counted ${int(ac.responses)} responses, the per-route tallies ${int(m.total.count)}`,
    );
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

export function targetLine(r: EngineRun): string {
  const parts = targetChecks(r).map(
    (c) =>
      `${c.what} ${c.value} (target ${c.what === 'errors' ? '0' : `<= ${c.limit}`}): ${c.met ? 'met' : 'MISSED'}`,
  );
  return `${r.engine}: ${parts.join('; ')}`;
}
