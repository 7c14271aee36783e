const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Whether `text` is canonical padded base64. Buffer.from(…, 'base64') skips what it cannot read,
 * so key-file fields and signatures are checked with this first.
 */
export function isBase64(text: string): boolean {
  return BASE64.test(text);
}
