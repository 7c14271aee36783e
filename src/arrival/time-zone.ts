import { EngineError } from '../domain/errors.js';
import type { ArrivalSql } from '../store/arrival-sql.js';

/** Each subject's time zone, in which arrival renders its dates. */
export interface TimeZones {
  /** The subject's zone, or the default when it has none. */
  of(subjectId: string): Promise<string>;
  /** The zone a subject's stored value names: the default when it has none (null). */
  orDefault(stored: string | null): string;
  /** Sets the subject's zone (an IANA name the database knows), or clears it with null. */
  set(subjectId: string, zone: string | null): Promise<void>;
}

/** Time zones over the subjects table; `defaultZone` stands in for subjects without one. */
export function createTimeZones(sql: ArrivalSql, zoneDefault: () => string): TimeZones {
  // asked for when first needed: the process's zone costs ICU's start-up (~15 ms), which a
  // command that assembles no arrival should not pay
  let zone: string | undefined;
  const defaultZone = (): string => (zone ??= zoneDefault());
  return {
    async of(subjectId) {
      return (await sql.timeZone(subjectId)) ?? defaultZone();
    },
    orDefault: (stored) => stored ?? defaultZone(),
    async set(subjectId, zone) {
      if (zone !== null && (typeof zone !== 'string' || !(await sql.knowsZone(zone)))) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `unknown time zone ${typeof zone === 'string' ? `"${zone}"` : String(zone)} (use an IANA name, e.g. Europe/Stockholm)`,
          { data: { field: 'zone' } },
        );
      }
      await sql.setTimeZone(subjectId, zone);
    },
  };
}
