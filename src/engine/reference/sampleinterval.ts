// SampledProfileInterval events, docs/format.md §G.4 (SetInterval 0x0F48, DCStart 0x0F49, DCEnd 0x0F4A;
// versions 2 and 3): one sampleIntervals row per event; the twin of assembly/sampleinterval.ts (payload drawn there).
import * as L from '../../generated/layout.js';
import { count, issue } from './diag.js';
import { copy64, type Arena } from './memory.js';
import { readString } from './strings.js';

/** Decodes one SampledProfileInterval event (`opcode` = low byte of its HookId): payload at `data` of `n` bytes of `d`. */
export function sampleIntervalEvent(a: Arena, d: DataView, data: number, n: number, version: number, opcode: number, cpu: number, tsAt: number, fileOffset: number): void {
  if (version < L.SPI_VERSION_MIN || version > L.SPI_VERSION_MAX) {
    count(a, L.D_SAMPLE_INTERVAL_SKIPPED_VERSION);
    return;
  }
  if (n < L.SPI_SIZE) {
    issue(a, L.D_SAMPLE_INTERVAL_SKIPPED_SHORT, n, fileOffset);
    return;
  }
  count(a, L.D_SAMPLE_INTERVAL_DECODED);
  const b = a.builders.sampleIntervals;
  const r = b.add();
  const c = b.view;
  let valid = L.SI_ALWAYS_VALID;
  copy64(d, tsAt, b.words[L.SI_TIMESTAMP]!, r);
  c.cpu[r] = cpu;
  c.opcode[r] = opcode;
  c.source[r] = d.getUint32(data + L.SPI_SOURCE, true);
  c.newInterval[r] = d.getUint32(data + L.SPI_NEW_INTERVAL, true);
  c.oldInterval[r] = d.getUint32(data + L.SPI_OLD_INTERVAL, true);
  if (version >= 3 && n > L.SPI_SIZE) {
    const s = readString(d, data + L.SPI_SOURCE_NAME, data + n, L.STR_UNIT_UTF16);
    c.sourceName[r] = s.text;
    valid |= (1 << L.SI_SOURCE_NAME) >>> 0;
    if (!s.terminated) issue(a, L.D_STRING_UNTERMINATED, L.SPI_SOURCE_NAME, fileOffset);
  }
  c.version[r] = version;
  c.fileOffset[r] = fileOffset;
  c.valid[r] = valid >>> 0;
}
