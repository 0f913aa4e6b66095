// Names of event kinds (docs/format.md §B.2 header types, §B.5 HookIds) and the rows of
// `summary.eventsByKind`: one per header kind and id, in a total order.
import * as L from './generated/layout.js';
import type { KindTally } from './engine.js';
import { hex } from './errors.js';

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

const HOOK_NAMES: Record<number, string> = {
  [L.HOOK_HEADER]: 'WMI_LOG_TYPE_HEADER',
  [L.HOOK_HEADER_EXTENSION]: 'WMI_LOG_TYPE_HEADER_EXTENSION',
  [L.HOOK_GROUP_MASKS_END]: 'WMI_LOG_TYPE_GROUP_MASKS_END',
  [L.HOOK_CSWITCH]: 'PERFINFO_LOG_TYPE_CONTEXTSWAP',
  [L.HOOK_COMPCS]: 'PERFINFO_LOG_TYPE_CONTEXTSWAP_BATCH',
  [L.HOOK_SPINLOCK]: 'PERFINFO_LOG_TYPE_SPINLOCK',
  [L.HOOK_READY_THREAD]: 'PERFINFO_LOG_TYPE_READY_THREAD',
  [L.HOOK_PROCESS_START]: 'Process/Start',
  [L.HOOK_PROCESS_END]: 'Process/End',
  [L.HOOK_PROCESS_DC_START]: 'Process/DCStart',
  [L.HOOK_PROCESS_DC_END]: 'Process/DCEnd',
  [L.HOOK_PROCESS_DEFUNCT]: 'Process/Defunct',
  [L.HOOK_THREAD_START]: 'Thread/Start',
  [L.HOOK_THREAD_END]: 'Thread/End',
  [L.HOOK_THREAD_DC_START]: 'Thread/DCStart',
  [L.HOOK_THREAD_DC_END]: 'Thread/DCEnd',
  [L.HOOK_THREAD_SET_NAME]: 'Thread/SetName',
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

export function kindRow(k: KindTally): KindRow {
  const headerType = HEADER_TYPE_NAMES[k.headerType] ?? `TYPE_${hex(k.headerType, 2)}`;
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
        provider: guidText(k.guid),
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
      return { headerType, provider: guidText(k.guid), eventType: k.id, version: k.version, count: k.count, bytes: k.bytes };
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
 * `rows` sorted by compareKinds, in place. Every field becomes a number — the texts their rank among the
 * distinct values — and the sort compares those: a trace with thousands of kinds (many with equal counts)
 * sorts in a fraction of the time, in exactly the same order.
 */
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
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => {
    const x = a * KEYS;
    const y = b * KEYS;
    for (let j = 0; j < KEYS; j++) {
      const d = key[x + j]! - key[y + j]!;
      if (d !== 0) return d;
    }
    return a - b; // (distinct kinds never tie; as a stable sort would)
  });
  const sorted = order.map((i) => rows[i]!);
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
