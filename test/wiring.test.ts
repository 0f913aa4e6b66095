// Where the registries are wired: only the entry points (src/index.ts, src/node.ts, the CLI's main(), the
// `etw-decode/reference` entry) register a parallel host or the reference engine; importing any other
// module registers nothing. And the file path workers open travels with the source (AsyncSource.path).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { ToWorker, WorkerSource } from '../src/parallel/protocol.js';
import type { ParallelHost } from '../src/parallel/host.js';
import { generateMixedTrace } from '../src/writer/index.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** the source files of src/ (generated ones aside), relative to it */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sources(p);
    return e.name.endsWith('.ts') ? [relative(SRC, p).replaceAll('\\', '/')] : [];
  });
}

/** the entry points, the only modules that wire registries */
const ENTRIES = ['index.ts', 'node.ts', 'cli/main.ts', 'engine/reference/index.ts'];

test('only the entry points call a register function', () => {
  const callers = sources().filter((f) => /(?<!function )\bregister(ParallelHost|ReferenceEngine)\(/.test(readFileSync(join(SRC, f), 'utf8')));
  expect(callers.sort()).toEqual([...ENTRIES].sort());
  // the path of a file source is a property of the source, not a module-global channel
  for (const f of sources()) {
    const text = readFileSync(join(SRC, f), 'utf8');
    expect(text, f).not.toMatch(/registerFilePath/);
    if (f.startsWith('parallel/') || f.startsWith('decode/')) expect(text, f).not.toMatch(/WeakMap/);
  }
});

describe('importing a module registers nothing; the entries do', () => {
  const saved = (globalThis as { Worker?: unknown }).Worker;
  afterEach(() => {
    (globalThis as { Worker?: unknown }).Worker = saved;
    vi.resetModules();
  });
  /** fresh copies of the modules (the registries start empty) */
  const fresh = async () => {
    vi.resetModules();
    const host = await import('../src/parallel/host.js');
    const engines = await import('../src/engine/engines.js');
    const referenceLoaded = () => {
      try {
        engines.createEngine('reference');
        return true;
      } catch {
        return false;
      }
    };
    return { parallelHost: host.parallelHost, referenceLoaded };
  };

  test('decode/files.ts and decode/decode.ts (even where a global Worker exists)', async () => {
    (globalThis as { Worker?: unknown }).Worker = class {};
    const { parallelHost, referenceLoaded } = await fresh();
    await import('../src/decode/files.js');
    await import('../src/decode/decode.js');
    expect(parallelHost()).toBeNull();
    expect(referenceLoaded()).toBe(false);
  });

  test('the CLI: importing it registers nothing, running it registers worker_threads', async () => {
    const { parallelHost } = await fresh();
    const { main } = await import('../src/cli/main.js');
    const { nodeHost } = await import('../src/parallel/node-host.js');
    expect(parallelHost()).toBeNull();
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await main(['--version'])).toBe(0);
    } finally {
      write.mockRestore();
    }
    expect(parallelHost()).toBe(nodeHost);
  });

  test('the node entry: worker_threads and the reference engine', async () => {
    const { parallelHost, referenceLoaded } = await fresh();
    await import('../src/node.js');
    const { nodeHost } = await import('../src/parallel/node-host.js');
    expect(parallelHost()).toBe(nodeHost);
    expect(referenceLoaded()).toBe(true);
  });

  test('the node entry where a global Worker exists (Deno, Bun): worker_threads all the same', async () => {
    (globalThis as { Worker?: unknown }).Worker = class {};
    const { parallelHost } = await fresh();
    await import('../src/node.js');
    const { nodeHost } = await import('../src/parallel/node-host.js');
    expect(parallelHost()).toBe(nodeHost);
  });

  test('the browser entry: Web Workers where they exist, else none; never the reference engine', async () => {
    let r = await fresh();
    await import('../src/index.js');
    expect(r.parallelHost()).toBeNull();
    (globalThis as { Worker?: unknown }).Worker = class {};
    r = await fresh();
    await import('../src/index.js');
    const { webHost } = await import('../src/parallel/web-host.js');
    expect(r.parallelHost()).toBe(webHost);
    expect(r.referenceLoaded()).toBe(false);
  });
});

describe('the file path travels with the source', () => {
  test("a file's workers open it by path; bytes in memory are read through this thread", async () => {
    const { streamFile, decodeStream } = await import('../src/node.js');
    const { nodeHost } = await import('../src/parallel/node-host.js');
    const { parallelHost, registerParallelHost } = await import('../src/parallel/host.js');
    expect(nodeHost.filePathOf({ size: 0, read: async () => new Uint8Array(), readInto: async () => 0, path: '/x.etl' })).toBe('/x.etl');
    expect(nodeHost.filePathOf({ size: 0, read: async () => new Uint8Array(), readInto: async () => 0 })).toBeNull();
    const sources: WorkerSource[] = [];
    // the workers decode every partition (this thread none), so each job says where its worker reads
    const recording: ParallelHost = {
      ...nodeHost,
      mainThreadDecodes: false,
      spawn() {
        const port = nodeHost.spawn();
        return { ...port, post: (m: ToWorker, transfer?: Transferable[]) => (m.t === 'job' && sources.push(m.source), port.post(m, transfer)) };
      },
    };
    const bytes = generateMixedTrace({ seed: 5, targetBytes: 2 << 20, cpus: 2 }).bytes;
    const dir = mkdtempSync(join(tmpdir(), 'etw-wiring-'));
    const path = join(dir, 'mixed.etl');
    writeFileSync(path, bytes);
    const previous = parallelHost();
    registerParallelHost(recording);
    try {
      const options = { threads: 2, parallel: { minBytes: 0, partitions: 4 } };
      const a = await streamFile(path, options);
      expect(sources.length).toBeGreaterThan(0);
      expect(sources.every((s) => s.kind === 'file' && s.path === path)).toBe(true);
      sources.length = 0;
      const b = await decodeStream(bytes, options);
      expect(sources.length).toBeGreaterThan(0);
      expect(sources.every((s) => s.kind === 'remote')).toBe(true);
      expect(b.summary).toEqual({ ...a.summary });
    } finally {
      registerParallelHost(previous);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
