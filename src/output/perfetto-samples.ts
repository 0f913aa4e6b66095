// Callstack samples of the Perfetto timeline (output/perfetto.ts): the interning of the SampledProfile rows'
// call stacks as Perfetto's InternedData — mappings, frames, function names, callstacks — and the PerfSample
// payload of one sample. Perfetto's UI shows them on the sample's thread (a CPU profile, flame graph).
//
// Messages and field numbers, from google/perfetto protos/perfetto/trace/interned_data/interned_data.proto,
// profiling/profile_common.proto and profiling/profile_packet.proto (proto2, package perfetto.protos):
//
//   InternedData    function_names 5, frames 6, callstacks 7, build_ids 16, mapping_paths 17 (InternedString),
//                   mappings 19
//   InternedString  iid 1 (uint64), str 2 (bytes)
//   Mapping         iid 1, build_id 2 (iid of build_ids), start 4, end 5 (uint64), path_string_ids 7
//                   (repeated iid of mapping_paths)
//   Frame           iid 1, function_name_id 2 (iid of function_names), mapping_id 3 (iid), rel_pc 4 (uint64)
//   Callstack       iid 1, frame_ids 2 (repeated uint64, not packed: "bottom frame first", the outermost)
//   PerfSample      cpu 1, pid 2, tid 3 (uint32), callstack_iid 4 (uint64), cpu_mode 5 (enum: 1 kernel, 2 user)
//
// Interning: every id is the count of its kind at its first use (1, 2, …), stable for a given input; each
// entry is written once, in the InternedData of the first packet that refers to it (take()). A mapping per
// image lifetime (a row of `images`: its base and end, its kernel path as path components — split at each
// backslash, which Perfetto joins with slashes: /Device/HarddiskVolume2/Windows/System32/ntdll.dll —, a build id
// of TimeDateStamp and SizeOfImage as symbol servers key PE files); a frame per (mapping, offset), or per
// address outside any image (no mapping); its function name module!0xoffset, or the address (no symbols:
// analysis/sample-frames.ts); a callstack per distinct frame sequence (a trie from the outermost frame).
// Per sample: map lookups only — an allocation at the first sight of an entry, none otherwise.
// Browser-safe: no node imports.
import { ImageMap } from '../derive/lifetimes.js';
import { addressName, moduleOffsetName, peBuildId } from '../analysis/sample-frames.js';
import { isKernelAddress } from '../analysis/samples.js';
import type { Table } from '../tables/table.js';
import { ProtoWriter, VARINT } from './protobuf.js';

// InternedData
const ID_FUNCTION_NAMES = 5;
const ID_FRAMES = 6;
const ID_CALLSTACKS = 7;
const ID_BUILD_IDS = 16;
const ID_MAPPING_PATHS = 17;
const ID_MAPPINGS = 19;
// InternedString, Mapping, Frame, Callstack
const STRING_IID = 1;
const STRING_STR = 2;
const MAPPING_IID = 1;
const MAPPING_BUILD_ID = 2;
const MAPPING_START = 4;
const MAPPING_END = 5;
const MAPPING_PATH_STRING_IDS = 7;
const FRAME_IID = 1;
const FRAME_FUNCTION_NAME_ID = 2;
const FRAME_MAPPING_ID = 3;
const FRAME_REL_PC = 4;
const CALLSTACK_IID = 1;
const CALLSTACK_FRAME_IDS = 2;
// PerfSample
const PS_CPU = 1;
const PS_PID = 2;
const PS_TID = 3;
const PS_CALLSTACK_IID = 4;
const PS_CPU_MODE = 5;
/** Profiling.CpuMode */
export const MODE_KERNEL = 1;
export const MODE_USER = 2;

/** A map of number → number maps, made on first use. */
function inner(m: Map<number, Map<number, number>>, k: number): Map<number, number> {
  let v = m.get(k);
  if (!v) m.set(k, (v = new Map()));
  return v;
}

/** Interned entries of one packet sequence, and those not yet written. */
export class CallstackInterner {
  /** entries made since the last take(), as InternedData fields */
  private readonly fresh = new ProtoWriter(1 << 12);
  private readonly map: ImageMap;
  private readonly names = new Map<string, number>();
  private readonly buildIds = new Map<string, number>();
  private readonly paths = new Map<string, number>();
  /** per row of `images`, its mapping iid (0: none yet) */
  private readonly mappingOfRow: Int32Array;
  private readonly frameInImage = new Map<number, Map<number, number>>();
  private readonly frameNoImage = new Map<number, Map<number, number>>();
  // callstacks: a trie from the outermost frame; node 0 is the empty stack
  private readonly children = new Map<number, Map<number, number>>();
  private readonly nodeParent: number[] = [0];
  private readonly nodeFrame: number[] = [0];
  private readonly nodeCallstack: number[] = [0];
  private readonly scratch: number[] = [];
  /** entries interned, by kind */
  readonly counts = { mappings: 0, frames: 0, functionNames: 0, callstacks: 0, buildIds: 0, mappingPaths: 0 };

  constructor(private readonly images: Table<'images'>) {
    this.map = new ImageMap(images);
    this.mappingOfRow = new Int32Array(images.length);
  }

  /**
   * The callstack iid of `n` frames, leaf first, as address words in `words` (frame k: low word at 2k,
   * high at 2k + 1) of process `pid` (-1: unknown) at time (tHi signed, tLo); `pointerSize` tells kernel
   * addresses (looked up among the kernel's images first) from user ones.
   */
  callstack(words: Uint32Array, n: number, pointerSize: number, pid: number, tHi: number, tLo: number): number {
    let node = 0;
    for (let k = n - 1; k >= 0; k--) {
      const frame = this.frame(pid, pointerSize, words[2 * k + 1]!, words[2 * k]!, tHi, tLo);
      const m = inner(this.children, node);
      let next = m.get(frame);
      if (next === undefined) {
        next = this.nodeParent.length;
        this.nodeParent.push(node);
        this.nodeFrame.push(frame);
        this.nodeCallstack.push(0);
        m.set(frame, next);
      }
      node = next;
    }
    let iid = this.nodeCallstack[node]!;
    if (iid === 0) {
      iid = this.nodeCallstack[node] = ++this.counts.callstacks;
      const f = this.fresh;
      const path = this.scratch;
      path.length = 0;
      for (let x = node; x !== 0; x = this.nodeParent[x]!) path.push(this.nodeFrame[x]!);
      f.begin(ID_CALLSTACKS);
      f.uint32Field(CALLSTACK_IID, iid);
      for (let k = path.length - 1; k >= 0; k--) f.uint32Field(CALLSTACK_FRAME_IDS, path[k]!); // outermost first
      f.end();
    }
    return iid;
  }

  /**
   * Writes the entries made since the last call as the `field` (InternedData) of the open message of `w`;
   * nothing when there are none.
   */
  take(w: ProtoWriter, field: number): void {
    const f = this.fresh;
    if (f.pos === 0) return;
    w.begin(field);
    w.ensure(f.pos);
    w.buf.set(f.buf.subarray(0, f.pos), w.pos);
    w.pos += f.pos;
    w.end();
    f.pos = 0;
  }

  private frame(pid: number, pointerSize: number, hi: number, lo: number, tHi: number, tLo: number): number {
    const row = this.map.find(pid, isKernelAddress(pointerSize, hi, lo), hi, lo, tHi, tLo);
    if (row < 0) {
      const m = inner(this.frameNoImage, hi);
      let iid = m.get(lo);
      if (iid === undefined) {
        iid = this.newFrame(this.string(this.names, ID_FUNCTION_NAMES, addressName(hi, lo), 'functionNames'), 0, 0);
        m.set(lo, iid);
      }
      return iid;
    }
    const mapping = this.mapping(row);
    const offset = this.map.offset(row, hi, lo);
    const m = inner(this.frameInImage, mapping);
    let iid = m.get(offset);
    if (iid === undefined) {
      iid = this.newFrame(this.string(this.names, ID_FUNCTION_NAMES, moduleOffsetName(this.images, row, offset), 'functionNames'), mapping, offset);
      m.set(offset, iid);
    }
    return iid;
  }

  private newFrame(name: number, mapping: number, offset: number): number {
    const iid = ++this.counts.frames;
    const f = this.fresh;
    f.begin(ID_FRAMES);
    f.uint32Field(FRAME_IID, iid);
    f.uint32Field(FRAME_FUNCTION_NAME_ID, name);
    if (mapping) {
      f.uint32Field(FRAME_MAPPING_ID, mapping);
      f.tag(FRAME_REL_PC, VARINT);
      f.varintNumber(offset);
    }
    f.end();
    return iid;
  }

  private mapping(row: number): number {
    const known = this.mappingOfRow[row]!;
    if (known) return known;
    const im = this.images;
    const buildId = this.string(this.buildIds, ID_BUILD_IDS, peBuildId(im, row), 'buildIds');
    const parts = (im.column('fileName')[row] || im.column('name')[row] || '(no name)').split('\\').filter((x) => x !== '');
    const path = this.scratch;
    path.length = 0;
    for (const part of parts) path.push(this.string(this.paths, ID_MAPPING_PATHS, part, 'mappingPaths'));
    const iid = (this.mappingOfRow[row] = ++this.counts.mappings);
    const base = im.column('imageBase')[row]!;
    const f = this.fresh;
    f.begin(ID_MAPPINGS);
    f.uint32Field(MAPPING_IID, iid);
    f.uint32Field(MAPPING_BUILD_ID, buildId);
    f.tag(MAPPING_START, VARINT);
    f.varintBigInt(base);
    f.tag(MAPPING_END, VARINT);
    f.varintBigInt(base + im.column('imageSize')[row]!);
    for (const id of path) f.uint32Field(MAPPING_PATH_STRING_IDS, id);
    f.end();
    return iid;
  }

  /** The iid of `s` among the InternedStrings of `field` (written the first time). */
  private string(index: Map<string, number>, field: number, s: string, kind: 'functionNames' | 'buildIds' | 'mappingPaths'): number {
    let iid = index.get(s);
    if (iid === undefined) {
      iid = ++this.counts[kind];
      index.set(s, iid);
      const f = this.fresh;
      f.begin(field);
      f.uint32Field(STRING_IID, iid);
      f.stringField(STRING_STR, s);
      f.end();
    }
    return iid;
  }
}

/** Writes a PerfSample message as field `field` of the open message of `w`; pid -1: unknown (omitted). */
export function writePerfSample(w: ProtoWriter, field: number, cpu: number, pid: number, tid: number, callstack: number, cpuMode: number): void {
  w.begin(field);
  w.uint32Field(PS_CPU, cpu);
  if (pid >= 0) w.uint32Field(PS_PID, pid);
  w.uint32Field(PS_TID, tid);
  w.uint32Field(PS_CALLSTACK_IID, callstack);
  w.uint32Field(PS_CPU_MODE, cpuMode);
  w.end();
}
