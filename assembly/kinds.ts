// Per-kind tally (docs/format.md §B.2): every walked event is counted under its header kind and id —
// HookId for SYSTEM/COMPACT/PERFINFO, Class.Type + Class.Version + GUID for FULL/INSTANCE
// (EVENT_TRACE_HEADER), EventId/Version/Opcode/Task + provider GUID + extended-info flag for
// EVENT_HEADER, MessageNumber for MESSAGE_TRACE_HEADER.
//
// Entries (layout.ts KIND_*, KIND_ENTRY_SIZE bytes) are stored densely in first-seen order — the
// order of the reference's Map, so even a partial sort downstream gives the same result — and found
// through an open-addressing hash index of KIND_INDEX_SLOTS u32 slots (memory.ts): entry number + 1 in
// the low half (0 = empty) and a 16-bit tag of the hash in the high half, so a probe reads an entry
// only when the tag matches, and the index stays sparse (<= 19 % full) even when the table is full.
// The key is four u64 words compared whole: word 0 = headerType, flags, version, id, task; word 1 =
// opcode, used (always 1); words 2-3 = GUID. Kernel events repeat, so the last entry is cached.
import * as L from './layout';
import { count } from './diag';
import { HOOK_CACHE_BITS, hookCacheStart, KIND_INDEX_SLOTS, kindIndexStart, kindsStart } from './memory';

/** key word 1 of every entry: opcode 0, used 1 */
const USED_WORD: u64 = <u64>1 << 8;

let kindEntries: i32 = 0;
// the last entry found and its key (word 1 is never 0 for a real key, so the cache starts empty)
let lastEntry: usize = 0;
let lastK0: u64 = 0;
let lastK1: u64 = 0;
let lastG0: u64 = 0;
let lastG1: u64 = 0;

// The key words of an event's kind by its header class (FULL/INSTANCE, EVENT_HEADER, MESSAGE; and, in word 0,
// SYSTEM/COMPACT/PERFINFO), one function per word so that the run loop and tally() build them alike.
// @ts-ignore: decorator
@inline
function keyWord0(p: usize, headerType: i32, cls: i32): u64 {
  if (cls == L.HC_PERFINFO) {
    const w = load<u64>(p); // marker (version = low byte), Size, HookId
    return <u64>headerType | ((w & 0xff) << 16) | ((w >>> 48) << 32);
  }
  if (cls == L.HC_EVENT) {
    return (
      <u64>headerType |
      (<u64>(load<u16>(p, L.EH_FLAGS) & L.EH_FLAG_EXTENDED_INFO) << 8) |
      (<u64>load<u8>(p, L.EH_VERSION) << 16) |
      (<u64>load<u16>(p, L.EH_EVENT_ID) << 32) |
      (<u64>load<u16>(p, L.EH_TASK) << 48)
    );
  }
  if (cls == L.HC_TRACE) return <u64>headerType | (<u64>load<u16>(p, L.ETH_VERSION) << 16) | (<u64>load<u8>(p, L.ETH_TYPE) << 32);
  if (cls == L.HC_MESSAGE) return <u64>headerType | (<u64>load<u16>(p, L.MTH_MESSAGE_NUMBER) << 32);
  return <u64>headerType;
}
// @ts-ignore: decorator
@inline
function keyWord1(p: usize, cls: i32): u64 {
  return cls == L.HC_EVENT ? USED_WORD | <u64>load<u8>(p, L.EH_OPCODE) : USED_WORD;
}
// @ts-ignore: decorator
@inline
function keyGuidAt(cls: i32): i32 {
  return cls == L.HC_EVENT ? L.EH_PROVIDER_ID : cls == L.HC_TRACE ? L.ETH_GUID : -1;
}

/** Counts the event at `p` (`size` bytes, header class `cls`, HeaderType `headerType`). */
// @ts-ignore: decorator
@inline
export function tally(p: usize, headerType: i32, cls: i32, size: i32): void {
  const k0 = keyWord0(p, headerType, cls);
  const k1 = keyWord1(p, cls);
  const guidAt = keyGuidAt(cls);
  const g0 = guidAt < 0 ? 0 : load<u64>(p + <usize>guidAt);
  const g1 = guidAt < 0 ? 0 : load<u64>(p + <usize>guidAt, 8);
  let e = lastEntry;
  if (k0 != lastK0 || k1 != lastK1 || g0 != lastG0 || g1 != lastG1) {
    e = findOrInsert(k0, k1, g0, g1);
    if (e == 0) return;
  }
  countKind(e, size);
}

/**
 * The tally entry of the kind of the event at `p` — of header class TRACE, EVENT or MESSAGE — if the table
 * has it, else 0: a lookup without a call (walk.ts walkRun), which inserts nothing.
 */
// @ts-ignore: decorator
@inline
export function knownOtherKind(p: usize, headerType: i32, cls: i32): usize {
  const guidAt = keyGuidAt(cls);
  return probe(
    keyWord0(p, headerType, cls),
    keyWord1(p, cls),
    guidAt < 0 ? 0 : load<u64>(p + <usize>guidAt),
    guidAt < 0 ? 0 : load<u64>(p + <usize>guidAt, 8),
  );
}

/** Key word 0 of a SYSTEM/COMPACT/PERFINFO kind (`w` = the event's first 8 bytes: marker, Size, HookId). */
// @ts-ignore: decorator
@inline
function perfinfoKey(w: u64, headerType: i32): u64 {
  return <u64>headerType | ((w & 0xff) << 16) | ((w >>> 48) << 32);
}

/** The kind cache slot of a SYSTEM/COMPACT/PERFINFO key (a hash of the whole word: by HookId alone,
 *  the versions of one HookId would evict each other). */
// @ts-ignore: decorator
@inline
function perfinfoSlot(k0: u64): usize {
  return hookCacheStart + (<usize>(k0 * 0x9e3779b97f4a7c15 >>> (64 - HOOK_CACHE_BITS)) << 1);
}

/**
 * The entry of a SYSTEM/COMPACT/PERFINFO event's kind if the kind cache has it, else 0. The cache is
 * direct-mapped (u16 slots: entry number + 1, 0 = empty) and checked against the entry's key word 0, which
 * holds headerType, version and HookId and is unique to SYSTEM/COMPACT/PERFINFO kinds (their other key
 * words are fixed).
 */
// @ts-ignore: decorator
@inline
export function cachedPerfinfoKind(w: u64, headerType: i32): usize {
  const k0 = perfinfoKey(w, headerType);
  const n = <i32>load<u16>(perfinfoSlot(k0));
  if (n == 0) return 0;
  const e = kindsStart + <usize>((n - 1) * L.KIND_ENTRY_SIZE);
  return load<u64>(e) == k0 ? e : 0;
}

/** Counts an event of `size` bytes in entry `e`. */
// @ts-ignore: decorator
@inline
export function countKind(e: usize, size: i32): void {
  store<u64>(e, load<u64>(e, L.KIND_COUNT) + 1, L.KIND_COUNT);
  store<u64>(e, load<u64>(e, L.KIND_BYTES) + <u64>size, L.KIND_BYTES);
}

/**
 * The tally entry of a SYSTEM/COMPACT/PERFINFO event's kind (`w` = its first 8 bytes): from the kind
 * cache, else found or inserted through the hash; 0 when the table is full (counted).
 */
export function perfinfoKind(w: u64, headerType: i32): usize {
  const e = cachedPerfinfoKind(w, headerType);
  return e != 0 ? e : perfinfoKindMiss(perfinfoKey(w, headerType));
}

function perfinfoKindMiss(k0: u64): usize {
  const e = findOrInsert(k0, USED_WORD, 0, 0);
  if (e != 0) store<u16>(perfinfoSlot(k0), <u16>(<i32>(e - kindsStart) / L.KIND_ENTRY_SIZE + 1));
  return e;
}

/** the index slot where the last probe() that found nothing stopped: where its key goes */
let probeSlot: usize = 0;

// @ts-ignore: decorator
@inline
function keyHash(k0: u64, k1: u64, g0: u64, g1: u64): u64 {
  const x = k0 * 0x9e3779b97f4a7c15 + k1 * 0xc2b2ae3d27d4eb4f + g0 * 0x165667b19e3779f9 + g1 * 0xd6e8feb86659fd93;
  return x ^ (x >>> 31);
}

/** An index slot's high 16 bits: a tag of other bits of the key's hash than those that chose the slot. */
// @ts-ignore: decorator
@inline
function slotTag(hx: u64): u32 {
  return <u32>(hx >>> 8) & 0xffff0000;
}

/** The entry of a key, or 0 when the table does not have it (then probeSlot is the empty slot for it). */
// @ts-ignore: decorator
@inline
function probe(k0: u64, k1: u64, g0: u64, g1: u64): usize {
  const hx = keyHash(k0, k1, g0, g1);
  let h = <i32>(hx >>> 50) & (KIND_INDEX_SLOTS - 1);
  // slot: entry number + 1 (low 16 bits, 0 = empty) | a 16-bit tag of other hash bits (high 16 bits);
  // an entry is compared only when its tag matches
  const tag = slotTag(hx);
  for (;;) {
    const slot = kindIndexStart + (<usize>h << 2);
    const s = load<u32>(slot);
    if (s == 0) {
      probeSlot = slot;
      return 0;
    }
    if ((s & 0xffff0000) == tag) {
      const e = kindsStart + <usize>(((s & 0xffff) - 1) * L.KIND_ENTRY_SIZE);
      if (load<u64>(e, 0) == k0 && load<u64>(e, 8) == k1 && load<u64>(e, L.KIND_GUID) == g0 && load<u64>(e, L.KIND_GUID + 8) == g1) return e;
    }
    h = (h + 1) & (KIND_INDEX_SLOTS - 1);
  }
  return unreachable(); // the index always has an empty slot (it is never more than KIND_MAX_DISTINCT full)
}

/** The entry of a key (inserted if new), or 0 when the table already holds KIND_MAX_DISTINCT kinds. */
function findOrInsert(k0: u64, k1: u64, g0: u64, g1: u64): usize {
  let e = probe(k0, k1, g0, g1);
  if (e == 0) {
    if (kindTableFull()) {
      count(L.D_KIND_TABLE_FULL);
      return 0;
    }
    e = kindsStart + <usize>(kindEntries * L.KIND_ENTRY_SIZE);
    store<u32>(probeSlot, slotTag(keyHash(k0, k1, g0, g1)) | <u32>(kindEntries + 1)); // (a new kind: rare)
    store<u64>(e, k0, 0);
    store<u64>(e, k1, 8);
    store<u64>(e, g0, L.KIND_GUID);
    store<u64>(e, g1, L.KIND_GUID + 8);
    kindEntries++;
  }
  lastEntry = e;
  lastK0 = k0;
  lastK1 = k1;
  lastG0 = g0;
  lastG1 = g1;
  return e;
}

/** Forgets every kind (init; the entries and the index are zeroed by the arena). */
export function resetKinds(): void {
  kindEntries = 0;
  lastEntry = 0;
  lastK0 = 0;
  lastK1 = 0;
  lastG0 = 0;
  lastG1 = 0;
}

/** No new kind can be entered: a new kind's events count in D_KIND_TABLE_FULL. */
// @ts-ignore: decorator
@inline
export function kindTableFull(): bool {
  return kindEntries >= L.KIND_MAX_DISTINCT;
}

export function kindCount(): i32 {
  return kindEntries;
}

/**
 * Partitioned decodes (src/parallel): adds a kind with no events yet — the key words of an entry (word 0:
 * headerType, flags, version, id, task; word 1: opcode, used; words 2-3: GUID) — as if it had been seen
 * first, so a partition counts its events like the whole decode would. false when the table is full.
 */
export function seedKind(k0: u64, k1: u64, g0: u64, g1: u64): bool {
  return findOrInsert(k0, k1 | USED_WORD, g0, g1) != 0;
}

/** seedKind() for `n` keys of four u64 words each at `keys`; returns how many were entered. */
export function seedKinds(keys: usize, n: i32): i32 {
  for (let i: i32 = 0; i < n; i++) {
    const k = keys + (<usize>i << 5);
    if (!seedKind(load<u64>(k), load<u64>(k, 8), load<u64>(k, 16), load<u64>(k, 24))) return i;
  }
  return n;
}
