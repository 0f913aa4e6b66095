// The thread id → slot index of the derivations (assembly/derive/): open addressing, the twin of
// IdIndex (src/derive/lifetimes.ts), and before it a direct-mapped cache of recent ids (idCached). One per
// instance (an instance is one deriver's).
import { regrow } from './reorder';

let idKeys: usize = 0;
let idVals: usize = 0; // slot + 1 (0: empty)
let idCap: i32 = 0;
let idShift: i32 = 22;
let idCount: i32 = 0;
// the cache: 2^CACHE_BITS (id, value + 1) pairs (value + 1 = 0: empty)
const CACHE_BITS: i32 = 12;
let cache: usize = 0;

/** The index's first table (once per instance). */
export function idInit(): void {
  idCap = 1024;
  idKeys = heap.alloc(<usize>idCap << 2);
  idVals = regrow(0, 0, <usize>idCap << 2);
  cache = regrow(0, 0, <usize>(2 << CACHE_BITS) << 2);
}

// @ts-ignore: decorator
@inline function cacheAt(id: i32): usize {
  return cache + ((<usize>(<u32>(id * 0x9e3779b1) >> (32 - CACHE_BITS)) << 1) << 2);
}

/** The value of `id` if it is in the cache of recent ids, else -1 (then idGet, and idRemember what it found). */
// @ts-ignore: decorator
@inline export function idCached(id: i32): i32 {
  const h = cacheAt(id);
  return load<i32>(h) == id ? load<i32>(h, 4) - 1 : -1;
}

/** `id` has `value`: into the cache of recent ids. */
export function idRemember(id: i32, value: i32): void {
  const c = cacheAt(id);
  store<i32>(c, id);
  store<i32>(c, value + 1, 4);
}

export function idGet(id: i32): i32 {
  const mask = idCap - 1;
  for (let h = <i32>(<u32>(id * 0x9e3779b1) >> idShift); ; h = (h + 1) & mask) {
    const v = load<i32>(idVals + (<usize>h << 2));
    if (v == 0) return -1;
    if (load<i32>(idKeys + (<usize>h << 2)) == id) return v - 1;
  }
  return -1;
}

/** Sets the slot of `id` (not in the index yet). */
export function idAdd(id: i32, value: i32): void {
  if (2 * (idCount + 1) > idCap) idRehash(idCap * 2);
  const mask = idCap - 1;
  let h = <i32>(<u32>(id * 0x9e3779b1) >> idShift);
  while (load<i32>(idVals + (<usize>h << 2)) != 0) h = (h + 1) & mask;
  store<i32>(idKeys + (<usize>h << 2), id);
  store<i32>(idVals + (<usize>h << 2), value + 1);
  idCount++;
  idRemember(id, value);
}

function idRehash(cap: i32): void {
  const keys = idKeys;
  const vals = idVals;
  const old = idCap;
  idKeys = heap.alloc(<usize>cap << 2);
  idVals = heap.alloc(<usize>cap << 2);
  memory.fill(idVals, 0, <usize>cap << 2);
  idCap = cap;
  idShift = 32 - <i32>ctz(cap);
  const mask = cap - 1;
  for (let i = 0; i < old; i++) {
    const v = load<i32>(vals + (<usize>i << 2));
    if (v == 0) continue;
    const k = load<i32>(keys + (<usize>i << 2));
    let h = <i32>(<u32>(k * 0x9e3779b1) >> idShift);
    while (load<i32>(idVals + (<usize>h << 2)) != 0) h = (h + 1) & mask;
    store<i32>(idKeys + (<usize>h << 2), k);
    store<i32>(idVals + (<usize>h << 2), v);
  }
}
