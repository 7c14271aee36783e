import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EngineError } from '../src/domain/errors.js';
import { parseChoice } from '../src/domain/vocabulary.js';
import { GLOBAL_OPTIONS, type OptionSpec, type OptionSpecs, type OptionValues } from './options.js';

type ParseArgsOptions = NonNullable<ParseArgsConfig['options']>;
type Raw = string | boolean | string[] | undefined;

/** The values every command shares, read by the runner. */
export interface GlobalValues {
  db: string | undefined;
  json: boolean;
  help: boolean;
}

/** What one command line holds once its options are parsed and checked. */
export interface ParsedCommandLine<O extends OptionSpecs> {
  values: OptionValues<O>;
  globals: GlobalValues;
  positionals: string[];
}

function parseArgsConfig(specs: OptionSpecs): ParseArgsOptions {
  const out: ParseArgsOptions = {};
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.kind === 'flag') {
      out[name] =
        spec.short === undefined ? { type: 'boolean' } : { type: 'boolean', short: spec.short };
    } else {
      out[name] = spec.kind === 'repeat' ? { type: 'string', multiple: true } : { type: 'string' };
    }
  }
  return out;
}

const invalid = (message: string): EngineError => new EngineError('INVALID_ARGUMENT', message);

/** `--name V` as the usage text shows it (for messages). */
export function optionSynopsis(name: string, spec: OptionSpec): string {
  switch (spec.kind) {
    case 'flag':
      return `--${name}`;
    case 'choice':
      return `--${name} ${spec.choices.join('|')}`;
    default:
      return `--${name} ${spec.value}`;
  }
}

function missing(name: string, spec: OptionSpec): EngineError {
  const code = spec.kind === 'text' ? (spec.missing ?? 'INVALID_ARGUMENT') : 'INVALID_ARGUMENT';
  return new EngineError(code, `${optionSynopsis(name, spec)} is required`);
}

function choice(name: string, spec: OptionSpec & { kind: 'choice' }, raw: string): string {
  try {
    return parseChoice(spec.choices, raw, `--${name}`);
  } catch (err) {
    if (spec.invalid === undefined || !(err instanceof EngineError)) throw err;
    throw new EngineError(spec.invalid, err.message, { data: { field: `--${name}` } });
  }
}

/**
 * NUL and lone surrogates: no store can keep them (the engine refuses them in every field it
 * stores, by the rule in src/domain/input.ts), and no path or URL can hold them; refused here so
 * the message names the flag. A real command line cannot carry either; an in-process caller can.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const unstorable = (v: string): boolean => v.includes('\u0000') || LONE_SURROGATE.test(v);

/** Years both JavaScript and PostgreSQL read the same way (the engine's rule for dates). */
const MIN_YEAR = 1;
const MAX_YEAR = 9999;

function checkText(name: string, v: string): string {
  if (unstorable(v)) {
    throw invalid(`--${name} contains a NUL character or a lone surrogate (not valid text)`);
  }
  return v;
}

function readValue(name: string, spec: OptionSpec, raw: Raw): unknown {
  if (spec.kind === 'flag') return raw === true;
  if (raw === undefined) {
    if ('required' in spec && spec.required === true) throw missing(name, spec);
    return undefined;
  }
  if (spec.kind === 'repeat') return (raw as string[]).map((v) => checkText(name, v));
  const v = checkText(name, raw as string);
  switch (spec.kind) {
    case 'text':
      return v;
    case 'choice':
      return choice(name, spec, v);
    case 'int':
      if (!/^\d+$/.test(v) || Number(v) < spec.min || !Number.isSafeInteger(Number(v))) {
        throw invalid(`--${name} must be a whole number of at least ${spec.min}, not "${v}"`);
      }
      return Number(v);
    case 'number': {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n) || n < spec.min) {
        throw invalid(`--${name} must be a number of at least ${spec.min}, not "${v}"`);
      }
      return n;
    }
    case 'list': {
      const items = v.split(',').map((s) => s.trim());
      if (items.some((s) => s === '')) throw invalid(`--${name} has an empty item: "${v}"`);
      return items;
    }
    case 'date': {
      const d = new Date(v);
      if (Number.isNaN(d.getTime())) throw invalid(`--${name} is not a date: "${v}"`);
      const year = d.getUTCFullYear();
      if (year < MIN_YEAR || year > MAX_YEAR) {
        throw invalid(`--${name} must be a date in the years ${MIN_YEAR} to ${MAX_YEAR}: "${v}"`);
      }
      return d;
    }
  }
}

/**
 * Parses a command's arguments against its declared options (and the global ones): unknown
 * options, missing required ones and malformed values are refused, in declaration order.
 */
export function parseCommandLine<O extends OptionSpecs>(
  argv: readonly string[],
  specs: O,
  allowPositionals: boolean,
): ParsedCommandLine<O> {
  let parsed: { values: Record<string, Raw>; positionals: string[] };
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: { ...parseArgsConfig(GLOBAL_OPTIONS), ...parseArgsConfig(specs) },
      strict: true,
      allowPositionals,
    });
    // parseArgs types its values from a literal config; ours is built, so it says no more than this
    parsed = { values: values as Record<string, Raw>, positionals };
  } catch (err) {
    throw invalid((err as Error).message);
  }
  const raw = parsed.values;
  const globals: GlobalValues = {
    db: typeof raw.db === 'string' ? raw.db : undefined,
    json: raw.json === true,
    help: raw.help === true,
  };
  const values: Record<string, unknown> = {};
  // --help answers before any value is checked: asking how to call a command is never an error.
  if (!globals.help) {
    if (globals.db !== undefined) checkText('db', globals.db);
    for (const p of parsed.positionals) {
      if (unstorable(p)) {
        throw invalid('an argument contains a NUL character or a lone surrogate (not valid text)');
      }
    }
    for (const [name, spec] of Object.entries(specs))
      values[name] = readValue(name, spec, raw[name]);
  }
  return { values: values as OptionValues<O>, globals, positionals: parsed.positionals };
}
