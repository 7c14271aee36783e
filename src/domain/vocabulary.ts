import { EngineError } from './errors.js';

/**
 * Reads one value of a closed vocabulary (`SLOT_RULES`, `TURN_ROLES`, …): the runtime guard for
 * JavaScript callers, and the parser the CLI uses for its strings. `field` names the input in
 * the INVALID_ARGUMENT message (the engine passes a field name, the CLI its flag).
 */
export function parseChoice<T extends string>(
  choices: readonly T[],
  value: unknown,
  field: string,
): T {
  const found = choices.find((c) => c === value);
  if (found === undefined) {
    const shown =
      typeof value === 'string'
        ? `"${value}"`
        : typeof value === 'object' && value !== null
          ? 'an object'
          : String(value);
    throw new EngineError(
      'INVALID_ARGUMENT',
      `${field} must be one of ${choices.join(', ')}, not ${shown}`,
      { data: { field } },
    );
  }
  return found;
}
