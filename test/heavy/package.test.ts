// What a user installs is the packed tarball, not this work tree: pack it, install it into an
// empty directory, and type-check and run examples/every-namespace.ts against it there.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedProject, ROOT, run, TSC } from '../support/packed.js';

describe('the packed package', () => {
  let dir: string;

  let tarball: string;

  beforeAll(() => {
    // `npm test` builds first; without dist there is nothing to pack.
    expect(existsSync(join(ROOT, 'dist', 'src', 'index.js'))).toBe(true);
    ({ dir, tarball } = packedProject({
      prefix: 'memledger-pack-',
      also: [],
      example: 'every-namespace.ts',
      file: 'example.ts',
    }));
  }, 300_000);
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('ships only the built library and CLI', () => {
    const files = run('tar', ['-tzf', tarball], dir)
      .split('\n')
      .filter((f) => f !== '');
    expect(files).toContain('package/dist/src/index.js');
    expect(files).toContain('package/dist/src/rules.d.ts');
    expect(files).toContain('package/dist/cli/main.js');
    // the README links into docs/, and package.json says MIT: both ship
    expect(files).toContain('package/LICENSE');
    expect(files).toContain('package/docs/EXPORT.md');
    expect(files).toContain('package/docs/TRUST.md');
    expect(files).toContain('package/dist/eval/run-locomo.js');
    expect(files.filter((f) => /\/(test|bench)\//.test(f) || f.endsWith('.ts.map'))).toEqual([]);
    // the bundled command and its chunks (rolldown.config.mjs), the store host's program with them
    expect(files).toContain('package/dist/cli/chunks/host-main.js');
  });

  it('the bundled command imports only Node, its dependencies and optional peers', async () => {
    const { builtinModules } = await import('node:module');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    const allowed = new Set([
      ...Object.keys(pkg.dependencies),
      ...Object.keys(pkg.peerDependencies),
    ]);
    const chunks = join(ROOT, 'dist', 'cli', 'chunks');
    const sources = [
      join(ROOT, 'dist', 'cli', 'main.js'),
      ...readdirSync(chunks).map((f) => join(chunks, f)),
    ];
    const bare = new Set<string>();
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      // the bundle's import statements start their lines; dynamic imports name a string
      const statics = text.matchAll(/^(?:import|export)\b[^\n]*?"([^"]+)";$/gm);
      const dynamics = text.matchAll(/\bimport\("([^"]+)"\)/g);
      for (const m of [...statics, ...dynamics]) {
        const spec = m[1] ?? '';
        if (spec.startsWith('.') || spec.startsWith('node:') || builtinModules.includes(spec)) {
          continue;
        }
        bare.add(
          spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? ''),
        );
      }
    }
    expect([...bare].filter((p) => !allowed.has(p))).toEqual([]);
    expect(bare.size).toBeGreaterThan(3); // negative control: the scan finds what it looks for
  });

  it('type-checks and runs an example that uses every namespace', () => {
    run(process.execPath, [TSC, '-p', 'tsconfig.json'], dir);
    const out = JSON.parse(run(process.execPath, [join(dir, 'out', 'example.js')], dir));
    expect(out).toMatchObject({
      transcriptHasReceipt: true,
      proposed: 1,
      dropped: ['EVIDENCE_NOT_USER_TURN'],
      pile: 1,
      chainOk: true,
      live: ['The user is allergic to peanuts.'],
      factStatus: 'active',
      commitment: 'open',
      arrivalHasFact: true,
      calibrated: true,
      probe: 'verified',
      settled: 'stands',
      embedded: true,
      unknownSubject: 'SUBJECT_NOT_FOUND',
      tokenRole: 'reader',
      runs: 0,
      rules: { attested: true, stripped: 1 },
    });
    expect(out.systemBlocks).toBeGreaterThan(0);
  });

  it('installs a working memledger command', () => {
    const help = run(join(dir, 'node_modules', '.bin', 'memledger'), ['--help'], dir);
    expect(help).toContain('reindex');
    expect(help).toContain('bench locomo');
  });

  it('exposes no deep import: only the root and memledger/rules', () => {
    const probe = join(dir, 'deep.mjs');
    writeFileSync(probe, "await import('memledger/dist/src/engine/test-access.js');\n");
    expect(() => run(process.execPath, [probe], dir)).toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });
});
