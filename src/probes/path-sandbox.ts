import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { SourceFallback } from './instruments.js';

export type SandboxedPath =
  | {
      ok: true;
      /** The real path, every symbolic link resolved, inside `root`. */
      real: string;
      /** The allowed root (real path) the file lies in. */
      root: string;
      /** `real` relative to `root`, with `/` separators. */
      rel: string;
      exists: boolean;
      /** The source path asked for, when the configured build fallback answered instead. */
      fallbackFrom?: string;
    }
  | { ok: false; errorCode: 'PATH_OUTSIDE_ROOTS' | 'UNREADABLE'; message: string };

type Failure = Extract<SandboxedPath, { ok: false }>;

const MAX_LINK_HOPS = 40;

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function outside(path: string): Failure {
  return {
    ok: false,
    errorCode: 'PATH_OUTSIDE_ROOTS',
    message: `${path} resolves outside the allowed roots`,
  };
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/**
 * The real path of the deepest existing ancestor joined with the rest, and the first dangling
 * symbolic link on the way if there is one (its target must be checked too).
 */
function realpathDeepest(path: string): { real: string; exists: boolean; link: string | null } {
  try {
    return { real: realpathSync(path), exists: true, link: null };
  } catch {
    // fall through: find the deepest part that exists
  }
  const parts = path.split(sep).filter((p) => p !== '');
  for (let i = parts.length - 1; i >= 0; i--) {
    let base: string;
    try {
      base = realpathSync(sep + parts.slice(0, i).join(sep));
    } catch {
      continue;
    }
    const next = join(base, parts[i] as string);
    const rest = parts.slice(i + 1);
    try {
      if (lstatSync(next).isSymbolicLink()) return { real: next, exists: false, link: next };
    } catch (err) {
      if (errno(err) !== 'ENOENT' && errno(err) !== 'ENOTDIR') throw err;
    }
    return { real: join(next, ...rest), exists: false, link: null };
  }
  return { real: path, exists: false, link: null };
}

/** Follows `path` hop by hop; every hop, dangling or not, must stay inside a root. */
function confine(
  path: string,
  roots: readonly string[],
): Failure | { ok: true; real: string; root: string; exists: boolean } {
  let current = path;
  for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
    let step: ReturnType<typeof realpathDeepest>;
    try {
      step = realpathDeepest(current);
    } catch (err) {
      return { ok: false, errorCode: 'UNREADABLE', message: `cannot inspect ${path}: ${errno(err)}` };
    }
    const root = roots.find((r) => inside(step.real, r));
    if (root === undefined) return outside(path);
    if (step.link === null) return { ok: true, real: step.real, root, exists: step.exists };
    const rest = relative(step.link, current.startsWith(step.link) ? current : step.link);
    current = join(resolve(dirname(step.link), readlinkSync(step.link)), rest);
  }
  return { ok: false, errorCode: 'UNREADABLE', message: `too many symbolic links in ${path}` };
}

function rebuild(rel: string, fallback: SourceFallback): string | null {
  if (!rel.startsWith(fallback.from) || !rel.endsWith(fallback.fromExt)) return null;
  const middle = rel.slice(fallback.from.length, rel.length - fallback.fromExt.length);
  return `${fallback.to}${middle}${fallback.toExt}`;
}

/**
 * Resolves a probe path inside the allowed roots. `..` segments are refused outright (a probe
 * path names something below a root; it never climbs); absolute paths must lie in a root; every
 * symbolic link on the way must stay in a root. A relative path is looked up in each root in
 * order; the configured source-to-build fallback applies only when the source exists in none.
 */
export function resolveInRoots(
  path: string,
  roots: readonly string[],
  fallback: SourceFallback | null,
): SandboxedPath {
  if (path.split(/[\\/]/).includes('..')) return outside(path);
  const real = roots.map(realOrResolved);
  let rels: string[];
  if (isAbsolute(path)) {
    const abs = resolve(path);
    const i = roots.findIndex((r, k) => inside(abs, resolve(r)) || inside(abs, real[k] as string));
    if (i === -1) return outside(path);
    const base = inside(abs, real[i] as string) ? (real[i] as string) : resolve(roots[i] as string);
    rels = [relative(base, abs)];
    real.unshift(...real.splice(i, 1));
  } else {
    rels = [path];
  }
  const lookup = (rel: string): Extract<SandboxedPath, { ok: true }> | Failure | null => {
    let first: Extract<SandboxedPath, { ok: true }> | null = null;
    for (const root of rels.length === 1 && isAbsolute(path) ? real.slice(0, 1) : real) {
      const found = confine(join(root, rel), real);
      if (!found.ok) return found;
      const hit = {
        ok: true as const,
        real: found.real,
        root: found.root,
        rel: relative(found.root, found.real).split(sep).join('/'),
        exists: found.exists,
      };
      if (hit.exists) return hit;
      first ??= hit;
    }
    return first;
  };
  const rel = (rels[0] as string).split(sep).join('/');
  const primary = lookup(rel);
  if (primary === null || !primary.ok || primary.exists || fallback === null) {
    return primary ?? outside(path);
  }
  const built = rebuild(rel.replace(/^\.\//, ''), fallback);
  if (built === null) return primary;
  const alternate = lookup(built);
  if (alternate === null || !alternate.ok || !alternate.exists) return primary;
  return { ...alternate, fallbackFrom: primary.rel };
}
