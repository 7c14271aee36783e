// The packed package as a user installs it: `npm pack` of this tree, installed into an empty
// project beside the packages named, with a strict tsconfig for one example file.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

export function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * A new project holding the packed package and `also` (npm specs), and `examples/<example>`
 * copied in as `file` with a tsconfig that compiles it to out/. `skipLibCheck`: libraries'
 * declarations unchecked, as in a project `tsc --init` makes.
 */
export function packedProject(options: {
  prefix: string;
  also: string[];
  example: string;
  file: string;
  skipLibCheck?: boolean;
}): { dir: string; tarball: string } {
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  // --ignore-scripts: `prepare` would rebuild dist while other test files run the CLI from it.
  run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], ROOT);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack made no tarball');
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'memledger-consumer', private: true, type: 'module' }),
  );
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      `./${tarball}`,
      ...options.also,
      `@types/node@${process.versions.node.split('.')[0]}`,
    ],
    dir,
  );
  copyFileSync(join(ROOT, 'examples', options.example), join(dir, options.file));
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
        ...(options.skipLibCheck === true ? { skipLibCheck: true } : {}),
        types: ['node'],
        outDir: 'out',
      },
      files: [options.file],
    }),
  );
  return { dir, tarball };
}
