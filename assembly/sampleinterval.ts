// SampledProfileInterval events, docs/format.md §G.4 (SetInterval 0x0F48, DCStart 0x0F49, DCEnd 0x0F4A;
// versions 2 and 3, the same layout on x86 and x64): one sampleIntervals row per event. Payload
// PERFINFO_SAMPLED_PROFILE_CONFIG:
//
//  0x00 u32 Source (KPROFILE_SOURCE)
//  0x04 u32 NewInterval (100 ns units)
//  0x08 u32 OldInterval
//  0x0C UTF-16Z SourceName (v3)
//
// src/engine/reference/sampleinterval.ts is its twin.
import * as L from './layout';
import { count, issue } from './diag';
import { addRow, col } from './memory';
import { putString, stringTerminated } from './strings';

/** Decodes one SampledProfileInterval event (`opcode` = low byte of its HookId); the row space was checked by the walker. */
export function sampleIntervalEvent(data: usize, n: i32, version: i32, opcode: i32, cpu: i32, tsAt: usize, fileOffset: f64): void {
  if (version < L.SPI_VERSION_MIN || version > L.SPI_VERSION_MAX) {
    count(L.D_SAMPLE_INTERVAL_SKIPPED_VERSION);
    return;
  }
  if (n < L.SPI_SIZE) {
    issue(L.D_SAMPLE_INTERVAL_SKIPPED_SHORT, <u32>n, fileOffset);
    return;
  }
  count(L.D_SAMPLE_INTERVAL_DECODED);
  const T = L.TABLE_SAMPLE_INTERVALS;
  const r = addRow(T);
  let valid = L.SI_ALWAYS_VALID;
  store<i64>(col(T, L.SI_TIMESTAMP) + (r << 3), load<i64>(tsAt));
  store<u16>(col(T, L.SI_CPU) + (r << 1), <u16>cpu);
  store<u8>(col(T, L.SI_OPCODE) + r, <u8>opcode);
  store<u32>(col(T, L.SI_SOURCE) + (r << 2), load<u32>(data, L.SPI_SOURCE));
  store<u32>(col(T, L.SI_NEW_INTERVAL) + (r << 2), load<u32>(data, L.SPI_NEW_INTERVAL));
  store<u32>(col(T, L.SI_OLD_INTERVAL) + (r << 2), load<u32>(data, L.SPI_OLD_INTERVAL));
  if (version >= 3 && n > L.SPI_SIZE) {
    store<u32>(col(T, L.SI_SOURCE_NAME) + (r << 2), putString(data + <usize>L.SPI_SOURCE_NAME, data + <usize>n, L.STR_UNIT_UTF16));
    valid |= <u32>1 << <u32>L.SI_SOURCE_NAME;
    if (!stringTerminated) issue(L.D_STRING_UNTERMINATED, <u32>L.SPI_SOURCE_NAME, fileOffset);
  }
  store<u8>(col(T, L.SI_VERSION) + r, <u8>version);
  store<f64>(col(T, L.SI_FILE_OFFSET) + (r << 3), fileOffset);
  store<u32>(col(T, L.SI_VALID) + (r << 2), valid);
}
