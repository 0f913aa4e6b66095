// Text cells as UTF-8 bytes: a CSV cell (RFC 4180 quoting) or a JSON string, encoded once per distinct
// value and cached, so a name that repeats on every row (image file names, thread names, enum names)
// costs one Map lookup and a copy. Lone UTF-16 surrogates become U+FFFD in CSV (TextEncoder, as Node
// writes strings) and \udXXX escapes in JSON (JSON.stringify).

/** A CSV cell: quoted when it holds a comma, a quote or a line break (quotes doubled). */
export function csvText(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A JSON string literal, exactly as JSON.stringify writes it. */
export function jsonText(s: string): string {
  return JSON.stringify(s);
}

const encoder = new TextEncoder();

/** Strings longer than this are encoded on every use instead of cached (command lines are rarely repeated). */
const CACHE_MAX_LENGTH = 256;
/** Entries kept before the cache is emptied (bounded memory whatever the input). */
const CACHE_MAX_ENTRIES = 16384;

/** The encoded text of strings, cached per distinct value. */
export class StringBytes {
  private readonly cache = new Map<string, Uint8Array>();

  constructor(private readonly quote: (s: string) => string) {}

  get(s: string): Uint8Array {
    const hit = this.cache.get(s);
    if (hit !== undefined) return hit;
    const bytes = encoder.encode(this.quote(s));
    if (s.length <= CACHE_MAX_LENGTH) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
      this.cache.set(s, bytes);
    }
    return bytes;
  }
}
