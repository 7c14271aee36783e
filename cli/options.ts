import type { ErrorCode } from '../src/index.js';

/**
 * A command's options, declared once as data: the parser, the typed values a command reads and
 * the usage text are all derived from these declarations.
 */
interface OptionBase {
  /** One line for the per-command help. */
  readonly help: string;
}

/** `--name`: true when given. */
export interface FlagOption extends OptionBase {
  readonly kind: 'flag';
  readonly short?: string;
}

/** `--name V`: a string. */
export interface TextOption extends OptionBase {
  readonly kind: 'text';
  /** The value's name in the usage text (`--session S`). */
  readonly value: string;
  readonly required?: boolean;
  /** The code a missing required value is refused with (default INVALID_ARGUMENT). */
  readonly missing?: ErrorCode;
}

/** `--name a|b|c`: one value of a closed vocabulary, parsed with `parseChoice`. */
export interface ChoiceOption<C extends string = string> extends OptionBase {
  readonly kind: 'choice';
  readonly choices: readonly C[];
  readonly required?: boolean;
  /** The code a value outside the vocabulary is refused with (default INVALID_ARGUMENT). */
  readonly invalid?: ErrorCode;
}

/** `--name N`: a whole number of at least `min`. */
export interface IntOption extends OptionBase {
  readonly kind: 'int';
  readonly value: string;
  readonly min: number;
}

/** `--name X`: a finite number of at least `min`. */
export interface NumberOption extends OptionBase {
  readonly kind: 'number';
  readonly value: string;
  readonly min: number;
}

/** `--name a,b`: a comma list; an empty item is an error, not silently dropped. */
export interface ListOption extends OptionBase {
  readonly kind: 'list';
  readonly value: string;
  readonly required?: boolean;
}

/** `--name V ...`: repeatable. */
export interface RepeatOption extends OptionBase {
  readonly kind: 'repeat';
  readonly value: string;
}

/** `--name ISO`: a date and time. */
export interface DateOption extends OptionBase {
  readonly kind: 'date';
  readonly value: string;
}

export type OptionSpec =
  | FlagOption
  | TextOption
  | ChoiceOption
  | IntOption
  | NumberOption
  | ListOption
  | RepeatOption
  | DateOption;

/** A command's declared options, by name (the name is the flag without `--`). */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

type Required<S, T> = S extends { readonly required: true } ? T : T | undefined;

/** The parsed value of one declared option. */
export type OptionValue<S> = S extends FlagOption
  ? boolean
  : S extends ChoiceOption<infer C>
    ? Required<S, C>
    : S extends IntOption | NumberOption
      ? number | undefined
      : S extends ListOption
        ? Required<S, readonly string[]>
        : S extends RepeatOption
          ? readonly string[] | undefined
          : S extends DateOption
            ? Date | undefined
            : S extends TextOption
              ? Required<S, string>
              : never;

/** The parsed values of a command's options: only declared names exist, each typed by its kind. */
export type OptionValues<O extends OptionSpecs> = { readonly [K in keyof O]: OptionValue<O[K]> };

/** Options every command takes; the runner reads them, commands never declare them. */
export const GLOBAL_OPTIONS = {
  db: {
    kind: 'text',
    value: 'DIR|memory://|postgres://…',
    help: 'the store (default $MEMLEDGER_DB, then ./.memledger)',
  },
  json: { kind: 'flag', help: 'print one JSON document on stdout' },
  help: { kind: 'flag', short: 'h', help: 'print this help' },
} as const satisfies OptionSpecs;

/** `--subject S` and the `--key F` that anchors its reads, for every command that acts on one subject. */
export const SUBJECT_OPTION = {
  subject: { kind: 'text', value: 'S', help: 'the subject (default owner)' },
  // every command that reads a subject's memory checks it against the owner's key file
  key: {
    kind: 'text',
    value: 'F',
    help: "the owner's key file every read is checked against (else $MEMLEDGER_OWNER_KEY, else ~/.config/memledger/owner-<subject>.key)",
  },
} as const satisfies OptionSpecs;

/** `--session S` for the commands that need one (SESSION_REQUIRED without it). */
export const SESSION_OPTION = {
  session: {
    kind: 'text',
    value: 'S',
    required: true,
    missing: 'SESSION_REQUIRED',
    help: 'the session (one of the subject’s)',
  },
} as const satisfies OptionSpecs;
