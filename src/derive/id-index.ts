// The one map of 32-bit ids (thread and process ids) to small integers (slots, rows) of the derivations:
// open addressing with linear probing in two Int32Arrays, at most half full, the hash the top bits of a
// Fibonacci product. No object, boxing or allocation per lookup.

export class IdIndex {
  private keys = new Int32Array(1024);
  /** value + 1 per bucket (0: empty) */
  private vals = new Int32Array(1024);
  /** 32 - log2(capacity) */
  private shift = 22;
  private n = 0;

  /** The value of `id` (u32 or int32 bits), or -1 when it has none. */
  get(id: number): number {
    const mask = this.keys.length - 1;
    for (let h = Math.imul(id, 0x9e3779b1) >>> this.shift; ; h = (h + 1) & mask) {
      const v = this.vals[h]!;
      if (v === 0) return -1;
      if (this.keys[h] === (id | 0)) return v < 0 ? -1 : v - 1;
    }
  }

  /** Sets the value of `id` (≥ 0; -1: `id` has none again — its bucket stays, so probes go on past it). */
  set(id: number, value: number): void {
    const mask = this.keys.length - 1;
    let h = Math.imul(id, 0x9e3779b1) >>> this.shift;
    for (; ; h = (h + 1) & mask) {
      const v = this.vals[h]!;
      if (v === 0) break;
      if (this.keys[h] === (id | 0)) {
        // a key keeps its bucket: -1 is stored as value + 1 = 0 would end probes, so as -1 (none)
        this.vals[h] = value < 0 ? -1 : value + 1;
        return;
      }
    }
    if (2 * (this.n + 1) > this.keys.length) {
      this.rehash(this.keys.length * 2);
      return this.set(id, value);
    }
    this.keys[h] = id | 0;
    this.vals[h] = value < 0 ? -1 : value + 1;
    this.n++;
  }

  private rehash(cap: number): void {
    const keys = this.keys;
    const vals = this.vals;
    this.keys = new Int32Array(cap);
    this.vals = new Int32Array(cap);
    this.shift = 32 - Math.log2(cap);
    const mask = cap - 1;
    for (let i = 0; i < keys.length; i++) {
      if (vals[i] === 0) continue;
      let h = Math.imul(keys[i]!, 0x9e3779b1) >>> this.shift;
      while (this.vals[h] !== 0) h = (h + 1) & mask;
      this.keys[h] = keys[i]!;
      this.vals[h] = vals[i]!;
    }
  }
}
