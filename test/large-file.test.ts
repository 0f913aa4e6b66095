// Files over 4 GiB decode through the streaming file API with exact offsets and bounded memory.
// The file is sparse: a header buffer, 65 empty-marker buffers of 64 MiB (holes), then real data buffers.
import { expect, test } from 'vitest';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { streamFile } from '../src/node.js';
import { writeTrace, type CSwitchSpec } from '../src/writer/index.js';
import { BUFFER_FLAG, BUFFER_TYPE, bufferHeader } from './helpers/bytes.js';

test('a 4.1 GiB sparse trace: rows past 4 GiB keep exact file offsets', { timeout: 300_000 }, async () => {
  const events: CSwitchSpec[] = Array.from({ length: 300 }, (_, i) => ({
    kind: 'cswitch', cpu: i % 2, timestamp: 2_000_000n + BigInt(i), version: 2, newThreadId: i + 1, oldThreadId: i,
    newThreadPriority: 8, oldThreadPriority: 8, previousCState: 0, newThreadPriorityDecrement: 0, oldThreadWaitReason: 0,
    oldThreadWaitMode: 0, oldThreadState: 5, oldThreadIdealProcessor: 0, newThreadWaitTime: 1, oldThreadRemainingQuantum: 0,
  }));
  const t = writeTrace({ numberOfProcessors: 2, bufferSize: 0x2000, outOfOrder: false, events });
  const header = t.buffers[0]!;
  const FILLER = 64 << 20;
  const fillers = 65;
  const dir = mkdtempSync(join(tmpdir(), 'etw-big-'));
  const path = join(dir, 'big.etl');
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, t.bytes, 0, header.size, 0);
    let pos = header.size;
    for (let i = 0; i < fillers; i++) {
      const h = bufferHeader({
        bufferSize: FILLER,
        savedOffset: 0x48, // and Offset: no events
        sequenceNumber: 1_000_000n + BigInt(i), // after the data buffers
        flags: BUFFER_FLAG.PROC_INDEX,
        type: BUFFER_TYPE.EMPTY_MARKER, // counted, not walked
      });
      writeSync(fd, h, 0, h.length, pos);
      pos += FILLER;
    }
    const dataStart = pos;
    writeSync(fd, t.bytes, header.size, t.bytes.length - header.size, pos);
    ftruncateSync(fd, pos + t.bytes.length - header.size);
    closeSync(fd);
    expect(dataStart).toBeGreaterThan(2 ** 32);

    let rows = 0;
    let minOffset = Infinity;
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const res = await streamFile(path, {
      windowBytes: FILLER,
      onRows: ({ cswitch }) => {
        rows += cswitch.length;
        const off = cswitch.column('fileOffset') as Float64Array;
        for (const o of off) minOffset = Math.min(minOffset, o);
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      },
      onProgress: () => {
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      },
    });
    expect(res.summary.buffers).toBe(t.buffers.length + fillers);
    expect(res.summary.diagnostics['buffersNotWalked']).toBe(fillers);
    expect(rows).toBe(300);
    expect(minOffset).toBe(dataStart + 0x48); // first event of the first data buffer, exact above 2^32
    expect(rssPeak - rssBefore).toBeLessThan(512 << 20); // bounded: far below the 4.1 GiB file
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
