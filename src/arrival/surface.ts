import { EngineError } from '../domain/errors.js';

const SURFACE = /^[a-z][a-z0-9_-]{0,63}$/;

/** A surface's name (chat, wake, …), checked: INVALID_ARGUMENT naming `field` otherwise. */
export function requireSurface(surface: unknown, field = 'surface'): string {
  if (typeof surface !== 'string' || !SURFACE.test(surface)) {
    const shown = typeof surface === 'string' ? `"${surface}"` : String(surface);
    throw new EngineError(
      'INVALID_ARGUMENT',
      `${field} ${shown}: use a-z, 0-9, _ and - (e.g. chat, wake)`,
      { data: { field } },
    );
  }
  return surface;
}
