import { EngineError } from './errors.js';

/**
 * Runtime guards for fields of an input, for JavaScript callers (and the faces that pass on what
 * they are sent): a wrong type is INVALID_ARGUMENT naming the field, in `data.field` too.
 */
export function invalidField(field: string, message: string): EngineError {
  return new EngineError('INVALID_ARGUMENT', `${field} ${message}`, { data: { field } });
}

/** A string, or absent (undefined). */
export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidField(field, 'must be a string');
  return value;
}

/** true, false, or absent. */
export function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalidField(field, 'must be true or false');
  return value;
}

/** A valid Date, or absent. */
export function optionalDate(value: unknown, field: string): Date | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw invalidField(field, 'must be a valid Date');
  }
  return value;
}

/** A list of strings, or absent. */
export function optionalStringList(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw invalidField(field, 'must be a list of strings');
  }
  return value as string[];
}

/** A whole number of at least `min`, or absent. */
export function optionalWhole(value: unknown, field: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw invalidField(field, `must be a whole number of at least ${min}`);
  }
  return value;
}

/** A plain object (not null, not a list), or absent. */
export function optionalObject(value: unknown, field: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidField(field, 'must be an object');
  }
  return value as Record<string, unknown>;
}
