// Byte buffers handed to a sink in parts, joined into one array (whole-table conversions for downloads,
// and the Arrow writer's small chunks).

/** The bytes of `parts` in order, in a new array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
