// What a user installs is the packed tarball, not this work tree: pack it, install it into an
// empty directory, and type-check and run examples/every-namespace.ts against it there.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('the packed package', () => {
  let dir: string;

  beforeAll(() => {
    // `npm test` builds first; without dist there is nothing to pack.
    expect(existsSync(join(ROOT, 'dist', 'src', 'index.js'))).toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'memledger-pack-'));
    // --ignore-scripts: `prepare` would rebuild dist while other test files run the CLI from it.
    run(NPM, ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], ROOT);
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'memledger-consumer', private: true, type: 'module' }),
    );
    run(
      NPM,
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        `./${tarball}`,
        `@types/node@${process.versions.node.split('.')[0]}`,
      ],
      dir,
    );
    copyFileSync(join(ROOT, 'examples', 'every-namespace.ts'), join(dir, 'example.ts'));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          verbatimModuleSyntax: true,
          types: ['node'],
          outDir: 'out',
        },
        files: ['example.ts'],
      }),
    );
  }, 300_000);
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('ships only the built library and CLI', () => {
    const files = run('tar', ['-tzf', readdirSync(dir).find((f) => f.endsWith('.tgz'))!], dir)
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
