import fc from 'fast-check';
import type { Command } from '../../cli/command.js';
import type { OptionSpec } from '../../cli/options.js';
import { unstorable } from './bad-input-arbitraries.js';

/**
 * Command lines wrong in exactly one way, for the option parser's property test: each with the
 * error code the parser must refuse it with.
 */

/** `memledger retract` with every required option, each a one-letter value; a test adds the bad one. */
export const RETRACT_ARGV: readonly string[] = [
  'retract',
  '--claim',
  'c',
  '--stood-on',
  's',
  '--why-wrong',
  'w',
  '--corrected',
  'k',
  '--procedure',
  'p',
  '--pass-obs',
  'fails',
  '--overturn-if',
  'passes',
];

/** A value each kind of option accepts, to fill in the required ones. */
export function goodValue(spec: OptionSpec): string[] {
  switch (spec.kind) {
    case 'flag':
      return [];
    case 'choice':
      return [spec.choices[0] as string];
    case 'int':
    case 'number':
      return [String(Math.max(spec.min, 1))];
    case 'date':
      return ['2024-01-01T00:00:00Z'];
    case 'list':
      return ['a,b'];
    default:
      return ['x'];
  }
}

/** A bad value for one option of `spec`'s kind, with the code it must get. */
export function badValue(
  name: string,
  spec: OptionSpec,
): fc.Arbitrary<{ argv: string[]; code: string }> {
  const value = (v: fc.Arbitrary<string>, code = 'INVALID_ARGUMENT') =>
    v.map((s) => ({ argv: [`--${name}=${s}`], code }));
  switch (spec.kind) {
    case 'flag':
      return value(fc.string());
    case 'choice':
      // a value no store can keep is refused as such before the vocabulary is looked at
      return fc.oneof(
        value(
          fc.string().filter((s) => !spec.choices.includes(s)),
          spec.invalid ?? 'INVALID_ARGUMENT',
        ),
        value(unstorable),
      );
    case 'int':
      return value(
        fc.oneof(
          fc.string().filter((s) => !/^\d+$/.test(s)),
          // below the minimum (for a minimum of 0, "-1" below stands for it)
          fc.integer({ min: -1, max: spec.min - 1 }).map(String),
          fc.constantFrom('-1', '1.5', '1e3', ' 1', '', '9007199254740993', '99999999999999999999'),
        ),
      );
    case 'number':
      return value(
        fc.oneof(
          fc.constantFrom('', '  ', 'abc', 'NaN', 'Infinity', '-Infinity', '1e400'),
          fc.integer({ min: Math.ceil(spec.min) - 1000, max: Math.ceil(spec.min) - 1 }).map(String),
        ),
      );
    case 'list':
      return value(
        fc.oneof(
          fc.constantFrom('', ',', 'a,,b', ',a', 'a,', ' , '),
          unstorable.map((s) => `a,${s}`),
        ),
      );
    case 'date':
      return value(
        fc.oneof(
          fc.constantFrom(
            'garbage',
            '0000-01-01T00:00:00Z',
            '+010000-01-01T00:00:00Z',
            '-000100-01-01T00:00:00Z',
            '+275760-09-13T00:00:00Z',
          ),
          unstorable,
        ),
      );
    default:
      return value(unstorable);
  }
}

/** A command line wrong in one way: a bad value, an unknown flag, a missing required value… */
export function badCommandLine(command: Command): fc.Arbitrary<{ argv: string[]; code: string }> {
  const entries = Object.entries(command.options);
  const required = entries.filter(([, s]) => 'required' in s && s.required === true);
  const base = required.flatMap(([name, spec]) => [`--${name}`, ...goodValue(spec)]);
  const known = new Set([...entries.map(([n]) => n), 'db', 'json', 'help']);
  const ways: Array<fc.Arbitrary<{ argv: string[]; code: string }>> = [
    fc
      .stringMatching(/^[a-z][a-z-]{0,12}$/)
      .filter((n) => !known.has(n))
      .map((n) => ({ argv: [`--${n}`, 'x'], code: 'INVALID_ARGUMENT' })),
    unstorable.map((db) => ({ argv: ['--db', db], code: 'INVALID_ARGUMENT' })),
    ...entries.map(([name, spec]) => badValue(name, spec)),
  ];
  const strings = entries.filter(([, s]) => s.kind !== 'flag');
  if (strings.length > 0) {
    ways.push(
      fc
        .constantFrom(...strings)
        .map(([name]) => ({ argv: [`--${name}`], code: 'INVALID_ARGUMENT' })),
    );
  }
  if (required.length > 0) {
    ways.push(
      fc.constantFrom(...required).map(([name, spec]) => ({
        argv: required.filter(([n]) => n !== name).flatMap(([n, s]) => [`--${n}`, ...goodValue(s)]),
        code: spec.kind === 'text' ? (spec.missing ?? 'INVALID_ARGUMENT') : 'INVALID_ARGUMENT',
        replace: true,
      })),
    );
  }
  if ((command.positionals?.length ?? 0) === 0) {
    ways.push(
      fc
        .string({ minLength: 1 })
        .filter((s) => !s.startsWith('-'))
        .map((p) => ({ argv: [p], code: 'INVALID_ARGUMENT' })),
    );
  } else {
    ways.push(unstorable.map((p) => ({ argv: [p], code: 'INVALID_ARGUMENT' })));
  }
  // a repeated option keeps its last value, so the bad one after the good base is what is read
  return fc.oneof(...ways).map((w) => ({
    argv: 'replace' in w ? w.argv : [...base, ...w.argv],
    code: w.code,
  }));
}
