// Names of event kinds (docs/format.md §B.2 header types, §B.5 HookIds) and the rows of
// `summary.eventsByKind`: one per header kind and id, in a total order.
import * as L from '../generated/layout.js';
import { HOOK_NAMES } from '../generated/registry.js';
import type { KindTally } from '../engine/engine.js';
import { hex } from '../errors.js';

export const HEADER_TYPE_NAMES: Record<number, string> = {
  [L.HT_SYSTEM32]: 'SYSTEM32',
  [L.HT_SYSTEM64]: 'SYSTEM64',
  [L.HT_COMPACT32]: 'COMPACT32',
  [L.HT_COMPACT64]: 'COMPACT64',
  [L.HT_FULL_HEADER32]: 'FULL_HEADER32',
  [L.HT_INSTANCE32]: 'INSTANCE32',
  [L.HT_TIMED]: 'TIMED',
  [L.HT_ERROR]: 'ERROR',
  [L.HT_WNODE_HEADER]: 'WNODE_HEADER',
  [L.HT_MESSAGE]: 'MESSAGE',
  [L.HT_PERFINFO32]: 'PERFINFO32',
  [L.HT_PERFINFO64]: 'PERFINFO64',
  [L.HT_EVENT_HEADER32]: 'EVENT_HEADER32',
  [L.HT_EVENT_HEADER64]: 'EVENT_HEADER64',
  [L.HT_FULL_HEADER64]: 'FULL_HEADER64',
  [L.HT_INSTANCE64]: 'INSTANCE64',
};

/** One row of eventsByKind. Fields depend on the header kind (see README). */
export interface KindRow {
  headerType: string;
  hookId?: number;
  name?: string;
  provider?: string;
  eventId?: number;
  eventType?: number;
  messageNumber?: number;
  opcode?: number;
  task?: number;
  extended?: boolean;
  version: number;
  count: number;
  bytes: number;
}

/** two lowercase hex digits of every byte value */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function guidText(b: Uint8Array): string {
  const h = (i: number) => HEX[b[i]!]!;
  return (
    h(3) + h(2) + h(1) + h(0) + '-' + h(5) + h(4) + '-' + h(7) + h(6) + '-' + h(8) + h(9) + '-' +
    h(10) + h(11) + h(12) + h(13) + h(14) + h(15)
  );
}

/** guidText of GUIDs that repeat (kinds share a few providers), each distinct GUID written once. */
class GuidTexts {
  private readonly seen = new Map<number, { guid: Uint8Array; text: string }[]>();

  text(guid: Uint8Array): string {
    const v = new DataView(guid.buffer, guid.byteOffset, 16);
    const hash = (v.getUint32(0, true) ^ Math.imul(v.getUint32(4, true), 31) ^ Math.imul(v.getUint32(8, true), 961) ^ v.getUint32(12, true)) >>> 0;
    let list = this.seen.get(hash);
    if (!list) this.seen.set(hash, (list = []));
    for (const e of list) {
      let same = true;
      for (let i = 0; i < 16 && same; i++) same = e.guid[i] === guid[i];
      if (same) return e.text;
    }
    const text = guidText(guid);
    list.push({ guid, text });
    return text;
  }
}

/** The name of a HeaderType in kind rows. */
function headerTypeName(headerType: number): string {
  return HEADER_TYPE_NAMES[headerType] ?? `TYPE_${hex(headerType, 2)}`;
}

/** Whether a kind of this HeaderType is keyed by a provider GUID (EVENT_HEADER, FULL/INSTANCE). */
function hasProvider(headerType: number): boolean {
  return (
    headerType === L.HT_EVENT_HEADER32 ||
    headerType === L.HT_EVENT_HEADER64 ||
    headerType === L.HT_FULL_HEADER32 ||
    headerType === L.HT_FULL_HEADER64 ||
    headerType === L.HT_INSTANCE32 ||
    headerType === L.HT_INSTANCE64
  );
}

export function kindRow(k: KindTally): KindRow {
  return kindRowOf(k, headerTypeName(k.headerType), hasProvider(k.headerType) ? guidText(k.guid) : '');
}

function kindRowOf(k: KindTally, headerType: string, provider: string): KindRow {
  switch (k.headerType) {
    case L.HT_SYSTEM32:
    case L.HT_SYSTEM64:
    case L.HT_COMPACT32:
    case L.HT_COMPACT64:
    case L.HT_PERFINFO32:
    case L.HT_PERFINFO64: {
      const row: KindRow = { headerType, hookId: k.id, version: k.version, count: k.count, bytes: k.bytes };
      const name = HOOK_NAMES[k.id];
      if (name) row.name = name;
      return row;
    }
    case L.HT_EVENT_HEADER32:
    case L.HT_EVENT_HEADER64:
      return {
        headerType,
        provider,
        eventId: k.id,
        version: k.version,
        opcode: k.opcode,
        task: k.task,
        extended: (k.flags & 1) !== 0,
        count: k.count,
        bytes: k.bytes,
      };
    case L.HT_FULL_HEADER32:
    case L.HT_FULL_HEADER64:
    case L.HT_INSTANCE32:
    case L.HT_INSTANCE64:
      return { headerType, provider, eventType: k.id, version: k.version, count: k.count, bytes: k.bytes };
    case L.HT_MESSAGE:
      return { headerType, messageNumber: k.id, version: k.version, count: k.count, bytes: k.bytes };
    default:
      return { headerType, version: k.version, count: k.count, bytes: k.bytes };
  }
}

/** A total order of kind rows: by count (descending), then every key field. */
let collator: Intl.Collator | undefined;
/** The collator of String.prototype.localeCompare, made on first use (making one costs milliseconds). */
function textOrder(): Intl.Collator {
  return (collator ??= new Intl.Collator());
}

export function compareKinds(a: KindRow, b: KindRow): number {
  // the same order as String.prototype.localeCompare, without building a collator per call
  const text = (x: string | undefined, y: string | undefined) => textOrder().compare(x ?? '', y ?? '');
  const num = (x: number | undefined, y: number | undefined) => (x ?? -1) - (y ?? -1);
  return (
    b.count - a.count ||
    text(a.headerType, b.headerType) ||
    num(a.hookId, b.hookId) ||
    text(a.provider, b.provider) ||
    num(a.eventId, b.eventId) ||
    num(a.eventType, b.eventType) ||
    num(a.messageNumber, b.messageNumber) ||
    num(a.version, b.version) ||
    num(a.opcode, b.opcode) ||
    num(a.task, b.task) ||
    Number(a.extended ?? false) - Number(b.extended ?? false)
  );
}

/** sort keys per row in sortKinds, in compareKinds' order (count negated: descending) */
const KEYS = 11;

/**
 * The rows of `tallies` in compareKinds' order (summary.eventsByKind). The sort keys come from the tallies
 * (objects of one shape) rather than from the rows (whose fields differ by header kind), and the texts are
 * ranked once among their distinct values: thousands of kinds sort in about a millisecond.
 */
export function kindRows(tallies: readonly KindTally[]): KindRow[] {
  const n = tallies.length;
  const names = new Map<number, string>();
  const headerTypes: string[] = [];
  const providers: string[] = [];
  const guids = new GuidTexts();
  for (const k of tallies) {
    let name = names.get(k.headerType);
    if (name === undefined) names.set(k.headerType, (name = headerTypeName(k.headerType)));
    headerTypes.push(name);
    providers.push(hasProvider(k.headerType) ? guids.text(k.guid) : '');
  }
  const headerRank = textRanks(headerTypes);
  const providerRank = textRanks(providers);
  const key = new Float64Array(n * KEYS).fill(-1);
  for (let i = 0; i < n; i++) {
    const t = tallies[i]!;
    const k = i * KEYS;
    key[k] = -t.count;
    key[k + 1] = headerRank.get(headerTypes[i]!)!;
    key[k + 3] = providerRank.get(providers[i]!)!;
    key[k + 7] = t.version;
    key[k + 10] = 0;
    switch (t.headerType) {
      case L.HT_SYSTEM32:
      case L.HT_SYSTEM64:
      case L.HT_COMPACT32:
      case L.HT_COMPACT64:
      case L.HT_PERFINFO32:
      case L.HT_PERFINFO64:
        key[k + 2] = t.id;
        break;
      case L.HT_EVENT_HEADER32:
      case L.HT_EVENT_HEADER64:
        key[k + 4] = t.id;
        key[k + 8] = t.opcode;
        key[k + 9] = t.task;
        key[k + 10] = t.flags & 1;
        break;
      case L.HT_FULL_HEADER32:
      case L.HT_FULL_HEADER64:
      case L.HT_INSTANCE32:
      case L.HT_INSTANCE64:
        key[k + 5] = t.id;
        break;
      case L.HT_MESSAGE:
        key[k + 6] = t.id;
        break;
      default:
        break;
    }
  }
  return sortedOrder(key, n).map((i) => kindRowOf(tallies[i]!, headerTypes[i]!, providers[i]!));
}

/**
 * Indices 0..n-1 ordered by their KEYS keys (a negated count down to -2^53, then integers from -1 below
 * 2^32 - 1), ties — which distinct kinds never have — by index. Each index becomes a string of its
 * keys as fixed-width 16-bit code units, so the sort is the engine's own string sort with no comparator
 * (a comparator runs tens of thousands of times, mostly before it is compiled: ~20 ms for 3000 kinds).
 */
function sortedOrder(key: Float64Array, n: number): number[] {
  // the count: 4 units; the other keys (+ 1) are below 2^32: 2 units each; the index: 2 units
  const width = 4 + 2 * (KEYS - 1) + 2;
  const units = new Array<number>(width);
  const texts = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const k = i * KEYS;
    const c = 2 ** 53 + key[k]!; // negated count: more first
    units[0] = Math.floor(c / 2 ** 48);
    units[1] = Math.floor(c / 2 ** 32) % 0x10000;
    const low = c % 2 ** 32;
    units[2] = low >>> 16;
    units[3] = low & 0xffff;
    for (let j = 1; j < KEYS; j++) {
      const v = key[k + j]! + 1;
      units[2 + 2 * j] = v >>> 16;
      units[3 + 2 * j] = v & 0xffff;
    }
    units[width - 2] = i >>> 16;
    units[width - 1] = i & 0xffff;
    texts[i] = String.fromCharCode.apply(null, units);
  }
  texts.sort(); // UTF-16 code-unit order
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const t = texts[i]!;
    order[i] = t.charCodeAt(width - 2) * 0x10000 + t.charCodeAt(width - 1);
  }
  return order;
}

/** `rows` sorted by compareKinds, in place (kindRows does the same for tallies). */
export function sortKinds(rows: KindRow[]): KindRow[] {
  const n = rows.length;
  const headerTypes = textRanks(rows.map((r) => r.headerType));
  const providers = textRanks(rows.map((r) => r.provider ?? ''));
  const key = new Float64Array(n * KEYS);
  const num = (x: number | undefined) => x ?? -1;
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    const k = i * KEYS;
    key[k] = -r.count;
    key[k + 1] = headerTypes.get(r.headerType)!;
    key[k + 2] = num(r.hookId);
    key[k + 3] = providers.get(r.provider ?? '')!;
    key[k + 4] = num(r.eventId);
    key[k + 5] = num(r.eventType);
    key[k + 6] = num(r.messageNumber);
    key[k + 7] = num(r.version);
    key[k + 8] = num(r.opcode);
    key[k + 9] = num(r.task);
    key[k + 10] = Number(r.extended ?? false);
  }
  const sorted = sortedOrder(key, n).map((i) => rows[i]!);
  for (let i = 0; i < n; i++) rows[i] = sorted[i]!;
  return rows;
}

/**
 * Whether `t` is a text whose order under the collator is its UTF-16 code-unit order (checked by
 * test/event-kinds.test.ts): '', a header type name kindRow writes (one of HEADER_TYPE_NAMES, or TYPE_0x..
 * with upper-case hex digits) or a GUID as guidText writes it (lower-case hex digits, '-' at fixed places).
 */
export function plainText(t: string): boolean {
  return t === '' || HEADER_TYPE_TEXTS.has(t) || /^TYPE_0x[0-9A-F]+$/.test(t) || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(t);
}

/** Rank of each distinct text in the collator's order (texts the collator finds equal share a rank). */
function textRanks(texts: string[]): Map<string, number> {
  const distinct = [...new Set(texts)];
  const ranks = new Map<string, number>();
  if (distinct.every(plainText)) {
    // (no collator needed: making one costs milliseconds)
    distinct.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)).forEach((t, i) => ranks.set(t, i));
    return ranks;
  }
  const c = textOrder();
  distinct.sort((x, y) => c.compare(x, y));
  let rank = 0;
  distinct.forEach((t, i) => {
    if (i > 0 && c.compare(distinct[i - 1]!, t) !== 0) rank++;
    ranks.set(t, rank);
  });
  return ranks;
}

const HEADER_TYPE_TEXTS: ReadonlySet<string> = new Set(Object.values(HEADER_TYPE_NAMES));
