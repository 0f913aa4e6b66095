// Per-kind tally (docs/format.md §B.2), the twin of assembly/kinds.ts: every walked event is counted
// under its header kind and id — HookId for SYSTEM/COMPACT/PERFINFO, Class.Type + Class.Version + GUID
// for FULL/INSTANCE, EventId/Version/Opcode/Task + provider GUID + extended-info flag for EVENT_HEADER,
// MessageNumber for MESSAGE. A Map keyed by text here; insertion order = the WASM table's first-seen order.
import * as L from '../../generated/layout.js';
import { count } from './diag.js';
import type { Arena } from './memory.js';

/** Counts the event at `p` of `d` (`size` bytes, header class `cls`, HeaderType `headerType`). */
export function tally(a: Arena, d: DataView, p: number, headerType: number, cls: number, size: number): void {
  let flags = 0;
  let version = 0;
  let id = 0;
  let task = 0;
  let opcode = 0;
  let guidAt = -1;
  if (cls === L.HC_PERFINFO) {
    version = d.getUint8(p);
    id = d.getUint16(p + L.TH_HOOK_ID, true);
  } else if (cls === L.HC_EVENT) {
    flags = d.getUint16(p + L.EH_FLAGS, true) & L.EH_FLAG_EXTENDED_INFO;
    id = d.getUint16(p + L.EH_EVENT_ID, true);
    version = d.getUint8(p + L.EH_VERSION);
    opcode = d.getUint8(p + L.EH_OPCODE);
    task = d.getUint16(p + L.EH_TASK, true);
    guidAt = p + L.EH_PROVIDER_ID;
  } else if (cls === L.HC_TRACE) {
    id = d.getUint8(p + L.ETH_TYPE);
    version = d.getUint16(p + L.ETH_VERSION, true);
    guidAt = p + L.ETH_GUID;
  } else if (cls === L.HC_MESSAGE) {
    id = d.getUint16(p + L.MTH_MESSAGE_NUMBER, true);
  }
  // kernel events repeat: try the last kind first
  const last = a.lastKind;
  if (
    last !== null &&
    last.headerType === headerType &&
    last.id === id &&
    last.version === version &&
    last.flags === flags &&
    last.task === task &&
    last.opcode === opcode &&
    sameGuid(d, guidAt, last.guid)
  ) {
    last.count++;
    last.bytes += size;
    return;
  }
  const guid = new Uint8Array(16);
  if (guidAt >= 0) guid.set(new Uint8Array(d.buffer, d.byteOffset + guidAt, 16));
  const key = `${headerType},${flags},${version},${id},${task},${opcode},${guid.join('.')}`;
  let entry = a.kinds.get(key);
  if (!entry) {
    if (a.kinds.size >= L.KIND_MAX_DISTINCT) {
      count(a, L.D_KIND_TABLE_FULL);
      return;
    }
    entry = { headerType, flags, version, id, task, opcode, guid, count: 0, bytes: 0 };
    a.kinds.set(key, entry);
  }
  entry.count++;
  entry.bytes += size;
  a.lastKind = entry;
}

function sameGuid(d: DataView, at: number, guid: Uint8Array): boolean {
  for (let i = 0; i < 16; i++) if ((at < 0 ? 0 : d.getUint8(at + i)) !== guid[i]) return false;
  return true;
}
