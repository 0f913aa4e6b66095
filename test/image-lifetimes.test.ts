// The `images` table (src/derive/lifetimes.ts deriveImages): one row per image lifetime per process, with
// the rules of `threads` — checked against an independent oracle on simulated traces (image events split
// into lifetimes per (processId, imageBase) from the writer's own truth), by hand on the edge cases, and
// on the real corpus (lifetime counts from the per-opcode counts).
import { describe, expect, test } from 'vitest';
import { decodeSync } from '../src/node.js';
import { deriveImages, imageName } from '../src/derive/lifetimes.js';
import { DerivedRows } from './helpers/derived-rows.js';
import * as L from '../src/generated/layout.js';
import { simulateSchedule, writeTrace, type SimulatedSchedule } from '../src/writer/index.js';

type ImageTruth = SimulatedSchedule['images'][number];
import { corpusTestsEnabled, readCorpus } from './helpers/corpus.js';

interface Life {
  processId: number;
  imageBase: bigint;
  imageSize: bigint;
  fileName: string | null;
  loadTime: bigint | null;
  unloadTime: bigint | null;
}

/** Lifetimes from the truth: per (pid, base), the events in time order cut before each load and after each unload. */
function oracle(images: ImageTruth[]): Life[] {
  const byKey = new Map<string, ImageTruth[]>();
  for (const e of images) {
    const k = `${e.processId}/${e.imageBase}`;
    (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(e);
  }
  const out: Life[] = [];
  for (const evs of byKey.values()) {
    const sorted = evs.map((e, i) => [e, i] as const).sort(([a, i], [b, j]) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : i - j)).map(([e]) => e);
    let run: ImageTruth[] = [];
    const close = () => {
      if (!run.length) return;
      const first = run[0]!;
      const last = run.at(-1)!;
      out.push({
        processId: first.processId,
        imageBase: first.imageBase,
        imageSize: first.imageSize,
        fileName: first.fileName,
        loadTime: first.opcode === 'load' ? first.timestamp : null,
        unloadTime: last.opcode === 'unload' ? last.timestamp : null,
      });
      run = [];
    };
    for (const e of sorted) {
      if (e.opcode === 'load') close();
      run.push(e);
      if (e.opcode === 'unload') close();
    }
    close();
  }
  return out;
}

const order = (a: Life, b: Life) =>
  a.processId - b.processId || (a.imageBase < b.imageBase ? -1 : a.imageBase > b.imageBase ? 1 : 0) || Number((a.loadTime ?? -1n) - (b.loadTime ?? -1n));

describe('simulated traces', () => {
  test.each([1, 2, 3, 4])('seed %i: images = the oracle, lifetimes of reused process ids apart', (seed) => {
    const sim = simulateSchedule({ seed, cpus: 2 + seed, duration: 600_000, switchMode: 'mixed', profileInterval: 5_000, images: true });
    const r = decodeSync(writeTrace(sim.description).bytes);
    const got = r.images.toArray().map((x) => ({ processId: x.processId, imageBase: x.imageBase, imageSize: x.imageSize, fileName: x.fileName, loadTime: x.loadTime, unloadTime: x.unloadTime }));
    const want = oracle(sim.images);
    expect(got.sort(order)).toEqual(want.sort(order));
    expect(r.summary.images).toBe(want.length);
    // every kind of lifetime is there: in the trace throughout, loaded in it, unloaded in it
    expect(want.some((x) => x.loadTime === null && x.unloadTime === null)).toBe(true);
    expect(want.some((x) => x.loadTime !== null)).toBe(true);
    expect(want.some((x) => x.unloadTime !== null)).toBe(true);
    for (const x of r.images) expect(x.name).toBe(x.fileName!.split('\\').at(-1));
    // a reused process id: its first process's image (unloaded) and its second's (loaded after) at one base
    const pid = sim.reusedProcessIds[0]!;
    const ntdll = want.filter((x) => x.processId === pid && x.fileName!.endsWith('ntdll.dll'));
    expect(ntdll.length).toBe(2);
    expect(ntdll[0]!.unloadTime! < ntdll[1]!.loadTime!).toBe(true);
  });
});

describe('rules by hand', () => {
  // rows: [timestamp, opcode, processId, imageBase, imageSize, fileName]
  function events(rows: [bigint, number, number, bigint, bigint, string | null][]) {
    const b = new DerivedRows('imageEvents');
    for (const [ts, op, pid, base, size, file] of rows) {
      const r = b.add();
      b.set(r, L.IE_TIMESTAMP, ts);
      b.set(r, L.IE_OPCODE, op);
      b.set(r, L.IE_PROCESS_ID, pid);
      b.set(r, L.IE_IMAGE_BASE, base);
      b.set(r, L.IE_IMAGE_SIZE, size);
      b.maybe(r, L.IE_FILE_NAME, file);
    }
    return b.take();
  }
  const [LOAD, UNLOAD, DCSTART, DCEND] = [10, 2, 3, 4];

  test('Load opens, Unload ends, DCStart/DCEnd add to the open lifetime (DCEnd ends nothing), in time order not row order', () => {
    const t = deriveImages(
      events([
        [50n, DCEND, 8, 0x1000n, 0x100n, '\\Device\\HarddiskVolume2\\a.dll'],
        [5n, DCSTART, 8, 0x1000n, 0x100n, '\\Device\\HarddiskVolume2\\a.dll'],
        [10n, UNLOAD, 8, 0x1000n, 0x100n, '\\Device\\HarddiskVolume2\\a.dll'],
        [20n, LOAD, 8, 0x1000n, 0x200n, '\\Device\\HarddiskVolume2\\b.dll'],
        [30n, LOAD, 9, 0x1000n, 0x200n, null], // another process: its own lifetime
        [40n, DCEND, 9, 0x1000n, 0x300n, 'C:\\x\\c.dll'], // fills the null file name, not the size
      ]),
    ).toArray();
    expect(t.map((x) => [x.processId, x.imageSize, x.name, x.loadTime, x.unloadTime])).toEqual([
      [8, 0x100n, 'a.dll', null, 10n],
      [8, 0x200n, 'b.dll', 20n, null],
      [9, 0x200n, 'c.dll', 30n, null],
    ]);
  });

  test('an Unload never seen loaded is a closed lifetime of its own; a Load while one is open opens another', () => {
    const t = deriveImages(
      events([
        [1n, UNLOAD, 4, 0x10n, 0x8n, 'x.sys'],
        [2n, LOAD, 4, 0x10n, 0x8n, 'y.sys'],
        [3n, LOAD, 4, 0x10n, 0x8n, 'z.sys'],
        [4n, UNLOAD, 4, 0x10n, 0x8n, 'z.sys'],
      ]),
    ).toArray();
    expect(t.map((x) => [x.fileName, x.loadTime, x.unloadTime])).toEqual([
      ['x.sys', null, 1n],
      ['y.sys', 2n, null],
      ['z.sys', 3n, 4n],
    ]);
  });

  test('imageName: the part after the last \\ or /, null when there is none', () => {
    expect(imageName('\\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll')).toBe('ntdll.dll');
    expect(imageName('\\SystemRoot\\system32\\ntoskrnl.exe')).toBe('ntoskrnl.exe');
    expect(imageName('C:/a/b.exe')).toBe('b.exe');
    expect(imageName('plain.dll')).toBe('plain.dll');
    expect(imageName('\\dir\\')).toBeNull();
  });
});

describe.skipIf(!corpusTestsEnabled())('real corpus', () => {
  test.each([
    // file, lifetimes, loaded before the trace (DCStart first), unloaded in it, loaded and unloaded in it, of process 0
    ['perfview-net.4.5.2.x64.etl', 1798, 1763, 32, 32, 141],
    ['airbus-ShutdownPerfDiagLogger.etl', 6936, 6864, 4791, 50, 196],
  ] as const)('%s: %i image lifetimes', (name, n, before, unloaded, both, kernel) => {
    const r = decodeSync(readCorpus(name));
    const im = r.images.toArray();
    expect(im.length).toBe(n);
    expect(r.summary.images).toBe(n);
    expect(im.filter((x) => x.loadTime === null).length).toBe(before);
    expect(im.filter((x) => x.unloadTime !== null).length).toBe(unloaded);
    expect(im.filter((x) => x.loadTime !== null && x.unloadTime !== null).length).toBe(both);
    expect(im.filter((x) => x.processId === 0).length).toBe(kernel);
    // as many lifetimes begin at a Load as there are Loads; each Unload ends one
    const ops = r.imageEvents.column('opcode');
    const count = (op: number) => ops.filter((o) => o === op).length;
    expect(im.filter((x) => x.loadTime !== null).length).toBe(count(10));
    expect(im.filter((x) => x.unloadTime !== null).length).toBe(count(2));
    // no two lifetimes of one (process, base) overlap in time
    const byKey = new Map<string, typeof im>();
    for (const x of im) (byKey.get(`${x.processId}/${x.imageBase}`) ?? byKey.set(`${x.processId}/${x.imageBase}`, []).get(`${x.processId}/${x.imageBase}`)!).push(x);
    for (const lives of byKey.values()) expect(lives.filter((x) => x.unloadTime === null).length).toBeLessThanOrEqual(1);
    for (const x of im) expect(x.name).toBe(x.fileName!.split('\\').at(-1));
  });
});
