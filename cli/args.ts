import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EngineError } from '../src/index.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command takes. */
export const GLOBAL_OPTIONS = {
  db: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

export interface GlobalValues {
  db?: string;
  json?: boolean;
  help?: boolean;
}

/** Splits argv into the command words (leading positionals) and the rest. */
export function splitCommand(
  argv: readonly string[],
  words: number,
): { command: string[]; rest: string[] } {
  const command: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (command.length < words && !arg.startsWith('-')) {
      command.push(arg);
      continue;
    }
    rest.push(arg);
    // a global option's value is not a command word
    if (arg === '--db' && i + 1 < argv.length) rest.push(argv[++i] as string);
  }
  return { command, rest };
}

export function parseCommandArgs<O extends Options>(
  argv: readonly string[],
  options: O,
  allowPositionals = false,
): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: { ...GLOBAL_OPTIONS, ...options },
      strict: true,
      allowPositionals,
    });
    return {
      values: values as Record<string, string | boolean | string[] | undefined>,
      positionals,
    };
  } catch (err) {
    throw new EngineError('INVALID_ARGUMENT', (err as Error).message);
  }
}

export function stringValue(values: Record<string, unknown>, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function flag(values: Record<string, unknown>, name: string): boolean {
  return values[name] === true;
}

/** `--tools a,b` → ['a', 'b']; an empty item is an error, not silently dropped. */
export function listValue(values: Record<string, unknown>, name: string): string[] | undefined {
  const v = stringValue(values, name);
  if (v === undefined) return undefined;
  const items = v.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) {
    throw new EngineError('INVALID_ARGUMENT', `--${name} has an empty item: "${v}"`);
  }
  return items;
}

export function intValue(
  values: Record<string, unknown>,
  name: string,
  min: number,
): number | undefined {
  const v = stringValue(values, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `--${name} must be a whole number of at least ${min}, not "${v}"`,
    );
  }
  return Number(v);
}
