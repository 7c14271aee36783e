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

/** The first symbolic link that does not resolve, and the path parts after it. */
interface DanglingLink {
  at: string;
  rest: string[];
}

/** The real path of the deepest existing ancestor joined with the rest, and any dangling link. */
function realpathDeepest(path: string): {
  real: string;
  exists: boolean;
  link: DanglingLink | null;
} {
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
    const at = join(base, parts[i] as string);
    const rest = parts.slice(i + 1);
    try {
      if (lstatSync(at).isSymbolicLink()) return { real: at, exists: false, link: { at, rest } };
    } catch (err) {
      if (errno(err) !== 'ENOENT' && errno(err) !== 'ENOTDIR') throw err;
    }
    return { real: join(at, ...rest), exists: false, link: null };
  }
  return { real: path, exists: false, link: null };
}

interface Confined {
  ok: true;
  real: string;
  root: string;
  exists: boolean;
}

/** Follows `path` hop by hop; every hop, dangling or not, must stay inside a root. */
function confine(path: string, roots: readonly string[]): Failure | Confined {
  let current = path;
  for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
    let step: ReturnType<typeof realpathDeepest>;
    try {
      step = realpathDeepest(current);
    } catch (err) {
      return {
        ok: false,
        errorCode: 'UNREADABLE',
        message: `cannot inspect ${path}: ${errno(err)}`,
      };
    }
    const root = roots.find((r) => inside(step.real, r));
    // A dangling link outside the roots is refused too: "missing" must not leak what lies there.
    if (root === undefined) return outside(path);
    if (step.link === null) return { ok: true, real: step.real, root, exists: step.exists };
    current = join(resolve(dirname(step.link.at), readlinkSync(step.link.at)), ...step.link.rest);
  }
  return { ok: false, errorCode: 'UNREADABLE', message: `too many symbolic links in ${path}` };
}

function rebuild(rel: string, fallback: SourceFallback): string | null {
  if (!rel.startsWith(fallback.from) || !rel.endsWith(fallback.fromExt)) return null;
  const middle = rel.slice(fallback.from.length, rel.length - fallback.fromExt.length);
  return `${fallback.to}${middle}${fallback.toExt}`;
}

/** The first base where `rel` exists, else where it would be in the first base. */
function lookup(bases: readonly string[], rel: string, roots: readonly string[]): SandboxedPath {
  let first: SandboxedPath | null = null;
  for (const base of bases) {
    const found = confine(join(base, rel), roots);
    if (!found.ok) return found;
    const hit: SandboxedPath = {
      ...found,
      rel: relative(found.root, found.real).split(sep).join('/'),
    };
    if (found.exists) return hit;
    first ??= hit;
  }
  return first ?? outside(rel);
}

/**
 * Resolves a probe path inside the allowed roots. `..` segments are refused outright (a probe
 * path names something below a root; it never climbs); an absolute path must lie in a root; every
 * symbolic link on the way must stay in a root. A relative path is looked up in each root in
 * order; the configured source-to-build fallback applies only when the source exists in none.
 */
export function resolveInRoots(
  path: string,
  roots: readonly string[],
  fallback: SourceFallback | null,
): SandboxedPath {
  if (path.split(/[\\/]/).includes('..')) return outside(path);
  const realRoots = roots.map(realOrResolved);
  let bases: readonly string[] = realRoots;
  let rel = path;
  if (isAbsolute(path)) {
    const abs = resolve(path);
    const k = roots.findIndex(
      (r, i) => inside(abs, realRoots[i] as string) || inside(abs, resolve(r)),
    );
    if (k === -1) return outside(path);
    const real = realRoots[k] as string;
    const base = inside(abs, real) ? real : resolve(roots[k] as string);
    bases = [base];
    rel = relative(base, abs);
  }
  const primary = lookup(bases, rel, realRoots);
  if (!primary.ok || primary.exists || fallback === null) return primary;
  const built = rebuild(
    rel
      .split(sep)
      .join('/')
      .replace(/^(\.\/)+/, ''),
    fallback,
  );
  if (built === null) return primary;
  const alternate = lookup(bases, built, realRoots);
  if (!alternate.ok) return alternate;
  return alternate.exists ? { ...alternate, fallbackFrom: primary.rel } : primary;
}
