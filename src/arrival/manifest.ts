import type { ArrivalManifest, ManifestDiff } from '../domain/manifest.js';

/**
 * Blocks left out of the block diff (their hashes stay in the manifest): the capability map only
 * renders the bound tools, whose change the diff reports as tools added or removed; the current
 * time differs on every arrival a minute apart and says nothing about what changed.
 */
export const UNDIFFED_BLOCKS: ReadonlySet<string> = new Set(['capabilities', 'current_time']);

/** Compares an arrival with the previous one on the same surface (none: everything is added). */
export function diffManifests(
  previous: ArrivalManifest | null,
  next: ArrivalManifest,
): ManifestDiff {
  const hashes = (m: ArrivalManifest | null) =>
    new Map(
      (m?.blocks ?? []).filter((b) => !UNDIFFED_BLOCKS.has(b.name)).map((b) => [b.name, b.sha256]),
    );
  const before = hashes(previous);
  const after = hashes(next);
  const prevTools = new Set(previous?.tools ?? []);
  const nextTools = new Set(next.tools);
  return {
    from: previous?.id ?? null,
    to: next.id,
    surface: next.surface,
    blocks: {
      added: [...after.keys()].filter((n) => !before.has(n)),
      removed: [...before.keys()].filter((n) => !after.has(n)),
      changed: [...after.entries()]
        .filter(([n, h]) => before.has(n) && before.get(n) !== h)
        .map(([n]) => n),
    },
    tools: {
      added: [...nextTools].filter((t) => !prevTools.has(t)).sort(),
      removed: [...prevTools].filter((t) => !nextTools.has(t)).sort(),
      countBefore: previous?.toolCount ?? null,
      countAfter: next.toolCount,
    },
  };
}
