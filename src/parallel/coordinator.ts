// A decode split across threads, with the rows, their order and the counters of one thread:
//
// 1. the input is framed here (framing.ts), and while it is, partitions are cut from what is framed so far
//    (partitioning.ts: a bet that buffers far apart in the file are in SequenceNumber order, checked when
//    framing ends; if it lost, every partition is dropped before anything was handed on, and the decode
//    starts over from the real order); the rest of the decode order is cut when framing ends;
// 2. decoders — workers, each its own WebAssembly instance of one compiled module, and in Node this thread
//    too (decoders.ts) — take the partitions one at a time, in order, as they become free; the first one
//    alone, the others once it is merged (they start from its trace-wide state and kinds: partition.ts);
// 3. the partitions' rows are handed on in decode order, partition after partition, each made what one
//    engine would have produced by the stitcher (stitch.ts), which also merges the counters, issues and
//    kinds; a partition whose guessed start was wrong, or whose outcome the stitching cannot repair, is
//    decoded again here from the exact state; nothing is handed on before framing ended and the bet held;
// 4. last, every processor's held-back compact switch (newThreadId null).
//
// Memory: a decoder sends rows ahead of the consumer up to `budget` bytes (then waits), so what waits here
// is at most budget x decoders (plus one chunk each), besides each decoder's engine; with no consumer of the
// big tables (summary) only the small thread and process event rows travel, and every decoder runs freely.
import { BufferTable } from '../framing/buffers.js';
import type { DriverResult } from '../decode/decode-steps.js';
import { frameBuffers, type FramingIssue } from '../framing/framing.js';
import * as L from '../generated/layout.js';
import { decodeOrder } from '../framing/ordering.js';
import { macrotask, runAsync, type AsyncSource, type ProgressHandler } from '../decode/runners.js';
import type { Chunks, DecodedTableName } from '../tables/schema.js';
import type { Steps } from '../decode/steps.js';
import { loadWasmModule } from '../engine/wasm/instance.js';
import { Cancelled, EventQueue, LocalDecoder, WorkerDecoder, type Decoder, type PartitionEvent } from './decoders.js';
import type { ParallelHost, WorkerPort } from './host.js';
import type { PartitionOutcome, PartitionStart } from './partition.js';
import { DEFAULT_GUIDE, guidedBounds, jobOf, keySorted, partitionBounds, SpeculativeCuts, verifyCuts, type Guide } from './partitioning.js';
import type { WorkerSource } from './protocol.js';
import { Stitcher } from './stitch.js';

export { guidedBounds, partitionBounds } from './partitioning.js';

export interface ParallelRequest {
  source: AsyncSource;
  /** decoders (threads) */
  threads: number;
  /** where workers come from; null: every decoder runs in this thread (tests) */
  host: ParallelHost | null;
  /**
   * workers the caller already started (spawnWorkers: before this module and the WebAssembly module were
   * loaded, so that their scripts load meanwhile); taken in order before any is spawned here, and terminated
   * with the decode
   */
  spawned?: readonly (WorkerPort | Error)[];
  bias?: number;
  windowBytes?: number;
  drainRows?: number;
  /** tables whose rows the consumer gets (the others are counted only) */
  ship: readonly DecodedTableName[];
  /** bytes of rows a decoder may send ahead of the consumer (Infinity: no limit) */
  budget: number;
  /** partitions of about equal bytes, cut once framing ended (default: guided, cut while framing) */
  partitions?: number;
  /** decode positions where partitions start, cut once framing ended (tests; instead of `partitions`) */
  cuts?: readonly number[];
  /** sizes of guided partitions (default DEFAULT_GUIDE) */
  guide?: Guide;
  onChunks: (chunks: Chunks) => void | Promise<void>;
  onProgress?: ProgressHandler;
  /** filled in with what the decode did (tests, benchmarks) */
  report?: ParallelReport;
  /** told what happens, when (benchmarks, debugging) */
  log?: (event: string) => void;
}

/** What a parallel decode did. */
export interface ParallelReport {
  partitions: number;
  /** partitions cut while framing */
  speculative: number;
  /** the bet on the file order lost: the decode started over */
  restarted: boolean;
  /** workers started, and how many became ready */
  workers: number;
  workersReady: number;
  /** partitions decoded again from the exact state, by reason */
  reruns: { trace: number; kinds: number; log: number };
}

export function emptyReport(): ParallelReport {
  return { partitions: 0, speculative: 0, restarted: false, workers: 0, workersReady: 0, reruns: { trace: 0, kinds: 0, log: 0 } };
}

/** Framing yields to other tasks (workers' messages, this thread's decoder) this often, in milliseconds. */
const FRAMING_SLICE_MS = 2;

/** `source`, with reads that give other tasks a turn every FRAMING_SLICE_MS (file reads of cached pages do not). */
export function yielding(source: AsyncSource): AsyncSource {
  let last = performance.now();
  const turn = async (): Promise<void> => {
    const now = performance.now();
    if (now - last < FRAMING_SLICE_MS) return;
    await macrotask();
    last = performance.now();
  };
  // the read starts first, the turn is taken while it is in flight: a read ahead (a 'prefetch' step, which
  // the steps do not await) must not wait for this thread's next await to begin
  const after = async <T>(read: Promise<T>): Promise<T> => {
    read.catch(() => {}); // a failure during the turn is the caller's (below), not an unhandled rejection
    await turn();
    return read;
  };
  return {
    size: source.size,
    headerBatch: source.headerBatch,
    turns: source.turns,
    read: (p, n) => after(source.read(p, n)),
    readInto: (p, t) => after(source.readInto(p, t)),
    readMany: (ps, n) =>
      after(source.readMany ? source.readMany(ps, n) : Promise.all(ps.map((p) => source.read(p, Math.min(n, source.size - p))))),
  };
}

/** The steps of `inner`, with `after` called each time it has taken a step's result. */
function* observed<R>(inner: Steps<R>, after: () => void): Steps<R> {
  for (;;) {
    const it = inner.next();
    after();
    if (it.done) return it.value;
    yield it.value;
  }
}

/** The error a restart pushes into the queues the consumer may be waiting on. */
class Restart extends Error {}

/** The decode of `req.source` split across `req.threads` decoders (see the file comment). */
export async function decodeParallel(req: ParallelRequest): Promise<DriverResult> {
  const { source, host } = req;
  const size = source.size;
  const report = req.report ?? emptyReport();
  const guide = req.guide ?? DEFAULT_GUIDE;
  const module = await loadWasmModule();
  const threads = Math.max(1, Math.floor(req.threads));
  const workers: WorkerDecoder[] = [];
  const idle: Decoder[] = [];
  let local: LocalDecoder | null = null;
  let exact: LocalDecoder | null = null;

  // what the consumer waits for: an event of a partition, a partition to exist, the end of framing
  let wake: (() => void) | null = null;
  let fatal: unknown = null;
  let dispatch = (): void => {};
  const kick = () => {
    dispatch();
    const w = wake;
    wake = null;
    w?.();
  };

  // partitions: bounds[k]..bounds[k + 1] (record indices while framing; decode positions once it ended)
  const table = new BufferTable();
  let order: Uint32Array | null = null;
  let bounds: number[] = [0];
  let final = false;
  let queues: EventQueue[] = [];
  let jobDecoder: Decoder[] = [];
  let jobIds: number[] = [];
  let nextPartition = 0;
  let nextJob = 0;
  let stitcher = new Stitcher();
  let progress: number[] = [];
  /** bumped when the decode starts over (partitioning.ts: the bet on the file order lost) */
  let generation = 0;
  /** queues the consumer may be waiting on, and the jobs still running */
  const live = new Set<EventQueue>();
  const running = new Map<number, Decoder>();
  const jobsOf = (d: Decoder): number => {
    let n = 0;
    for (const x of running.values()) if (x === d) n++;
    return n;
  };
  const reportProgress = () => {
    let done = 0;
    for (const p of progress) done += p;
    req.onProgress?.('decode', Math.min(done, size), size);
  };

  // rows are handed on in order, through one chain, once framing ended and the bet held
  let verified = false;
  let pending: { chunks: Chunks; credit: () => void }[] = [];
  let chain: Promise<void> = Promise.resolve();
  const deliver = (chunks: Chunks, credit: () => void): Promise<void> => {
    if (!verified) {
      pending.push({ chunks, credit });
      return Promise.resolve();
    }
    chain = chain.then(async () => {
      await req.onChunks(chunks);
      credit();
    });
    chain.catch(() => {}); // awaited by the consumer; never an unhandled rejection meanwhile
    return chain;
  };

  try {
    // workers start now: their scripts load while the input is framed
    const wanted = host ? (host.mainThreadDecodes ? threads - 1 : threads) : 0;
    const path = host?.filePathOf(source) ?? null;
    const where: WorkerSource = path !== null ? { kind: 'file', path } : { kind: 'remote' };
    for (let i = 0; i < wanted; i++) {
      let port: WorkerPort;
      try {
        const given = req.spawned?.[i];
        if (given instanceof Error) throw given;
        port = given ?? host!.spawn();
      } catch (e) {
        // no workers here (a sandbox, a page whose bundle lacks the worker script): this thread decodes
        req.log?.(`no worker: ${(e as Error).message}`);
        break;
      }
      workers.push(
        new WorkerDecoder(
          port,
          module,
          source,
          where,
          req.budget,
          (d) => {
            req.log?.(`worker ${workers.indexOf(d)} ready`);
            report.workersReady++;
            // two jobs at a time: the next one is queued in the worker, which goes on to it without a round trip
            idle.push(d, d);
            kick();
          },
          (d) => {
            for (let at = idle.indexOf(d); at >= 0; at = idle.indexOf(d)) idle.splice(at, 1);
            kick();
          },
        ),
      );
    }
    report.workers = workers.length;
    req.log?.(`${workers.length} workers spawned`);
    if (!host) {
      // no workers (tests): every decoder in this thread, each its own engine, interleaved at their reads
      for (let i = 0; i < threads; i++) idle.push((local = new LocalDecoder(module, source, req.budget)));
    } else if (host.mainThreadDecodes || threads === 1 || workers.length === 0) {
      // its reads give other tasks a turn (FRAMING_SLICE_MS): the workers' messages — ready, rows, reads to
      // serve from an input in memory — are handled while this thread decodes, not only after it
      local = new LocalDecoder(module, workers.length > 0 ? yielding(source) : source, req.budget);
      idle.push(local);
    }
    const decoders = host ? Math.max(1, local ? wanted + 1 : wanted) : threads;

    const idsOf = (k: number): Uint32Array => (order ? order.subarray(bounds[k]!, bounds[k + 1]!) : keySorted(table, bounds[k]!, bounds[k + 1]!));
    const start = (d: Decoder, k: number, st: PartitionStart, ship: readonly DecodedTableName[], q: EventQueue, free: boolean): number => {
      const id = nextJob++;
      const p = progress;
      live.add(q);
      q.credit = (bytes) => d.credit(id, bytes);
      running.set(id, d);
      const options = { bias: req.bias, windowBytes: req.windowBytes, drainRows: req.drainRows, turns: source.turns === true };
      d.run(id, jobOf(table, idsOf(k), k, st, size, options, ship), {
        started: (trace) => q.push({ type: 'started', trace }),
        rows: (chunks, marks, bytes) => {
          if (q.dropping) q.dropping(bytes);
          else q.push({ type: 'rows', chunks, marks, bytes });
        },
        progress: (done) => {
          p[k] = done;
          if (p === progress) reportProgress();
        },
        end: (e) => {
          running.delete(id);
          q.push(e);
          if (free) {
            idle.push(d);
            kick();
          }
        },
      });
      return id;
    };
    /**
     * gives free decoders the next partitions, in order: the first alone, the others once it is merged
     * (they start from its trace-wide state and kinds: stitch.ts guess())
     */
    dispatch = () => {
      while (idle.length && nextPartition < bounds.length - 1 && (nextPartition === 0 || stitcher.taken > 0)) {
        // while this thread frames, it decodes nothing but a first partition no worker is ready for: framing
        // cuts the partitions the workers wait for
        const allowed = (x: Decoder) => !host || final || x instanceof WorkerDecoder || nextPartition === 0;
        // a decoder with nothing to do first, then a worker's second slot (its next job, queued)
        let at = idle.findIndex((x) => allowed(x) && !jobsOf(x));
        if (at < 0) at = idle.findIndex(allowed);
        if (at < 0) break;
        const d = idle.splice(at, 1)[0]!;
        if (d instanceof WorkerDecoder && d.dead) continue;
        const k = nextPartition++;
        queues[k] = new EventQueue();
        jobDecoder[k] = d;
        jobIds[k] = start(d, k, stitcher.guess(), req.ship, queues[k]!, true);
        req.log?.(`partition ${k} (${bounds[k + 1]! - bounds[k]!} buffers) to ${d instanceof WorkerDecoder ? `worker ${workers.indexOf(d)}` : 'this thread'}`);
      }
      // every worker failed to start and this thread does not decode: it does now
      if (nextPartition < bounds.length - 1 && idle.length === 0 && !local && workers.every((w) => w.dead)) {
        local = new LocalDecoder(module, source, req.budget);
        idle.push(local);
        dispatch();
      }
    };
    /** decodes partition k again in this thread from the exact state (its own engine) */
    const rerun = (k: number, ship: readonly DecodedTableName[], st: PartitionStart): { q: EventQueue; d: Decoder; id: number } => {
      const d = (exact ??= new LocalDecoder(module, source, req.budget));
      const q = new EventQueue();
      return { q, d, id: start(d, k, st, ship, q, false) };
    };

    // 1. framing, and partitions cut while it goes on (the default, guided partitions only)
    const framingIssues: FramingIssue[] = [];
    const framingCounters = new Array<number>(L.D_COUNTER_COUNT).fill(0);
    const cutter = req.cuts || req.partitions ? null : new SpeculativeCuts(table, size, decoders, guide);
    const framing = runAsync(
      cutter ? yielding(source) : source,
      observed(frameBuffers(size, framingIssues, framingCounters, source.headerBatch, table), () => {
        if (cutter && cutter.update()) {
          bounds = [0, ...cutter.cuts];
          kick();
        }
      }),
      () => {},
      req.onProgress,
    ).then(
      () => {
        const o = decodeOrder(table);
        const n = o.length;
        if (cutter && !verifyCuts(table, cutter.cuts)) {
          // the bet lost: nothing was handed on; drop every partition and start over from the real order
          report.restarted = true;
          generation++;
          for (const [j, d] of running) d.cancel(j);
          for (const q of live) {
            q.discard((bytes) => q.credit?.(bytes));
            q.push({ type: 'error', error: new Restart() });
          }
          live.clear();
          for (const p of pending) p.credit();
          pending = [];
          queues = [];
          jobDecoder = [];
          jobIds = [];
          nextPartition = 0;
          stitcher = new Stitcher();
          progress = [];
          bounds = guidedBounds(table.size, o, decoders, guide);
        } else if (cutter) {
          report.speculative = cutter.cuts.length;
          const last = cutter.cuts.length ? cutter.cuts[cutter.cuts.length - 1]! : 0;
          bounds = [0, ...cutter.cuts, ...guidedBounds(table.size, o, decoders, guide, last).filter((b) => b > last)];
          if (bounds[bounds.length - 1] !== n) bounds.push(n);
        } else {
          bounds = req.cuts
            ? [0, ...[...new Set(req.cuts)].filter((c) => c > 0 && c < n).sort((a, b) => a - b), n]
            : partitionBounds(table.size, o, req.partitions!);
        }
        if (bounds.length === 1) bounds.push(n); // no buffer at all: one empty partition
        req.log?.(`framed: ${n} buffers, ${bounds.length - 1} partitions${report.restarted ? ' (restart)' : ''}`);
        order = o;
        final = true;
        report.partitions = bounds.length - 1;
        verified = true;
        const flush = pending;
        pending = [];
        for (const p of flush) {
          chain = chain.then(async () => {
            await req.onChunks(p.chunks);
            p.credit();
          });
        }
        chain.catch(() => {});
        kick();
      },
      (e: unknown) => {
        fatal = e;
        kick();
      },
    );
    framing.catch(() => {});

    /** the next event of partition k, dispatching while waiting */
    const nextEvent = async (k: number): Promise<PartitionEvent | null> => {
      for (;;) {
        if (fatal) throw fatal;
        dispatch();
        const queue = queues[k];
        if (queue) return queue.next();
        if (final && k >= bounds.length - 1) return null;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    };

    // 2. the partitions' rows, in order, stitched (from the start again after a restart)
    const reads = { loads: 0, singles: 0, bytes: 0 };
    const addReads = (o: PartitionOutcome) => {
      reads.loads += o.reads.loads;
      reads.singles += o.reads.singles;
      reads.bytes += o.reads.bytes;
    };
    outer: for (;;) {
      const gen = generation;
      reads.loads = reads.singles = reads.bytes = 0;
      for (let k = 0; ; k++) {
        let first = await nextEvent(k);
        if (gen !== generation) continue outer;
        if (first === null) break outer;
        let queue = queues[k]!;
        let decoder = jobDecoder[k]!;
        let job = jobIds[k]!;
        if (first.type === 'started' && !stitcher.startMatches(first.trace)) {
          // the guessed trace-wide state is not what the partitions before leave: decode it again, exactly
          const d = decoder;
          const j = job;
          report.reruns.trace++;
          d.cancel(j);
          queue.discard((bytes) => d.credit(j, bytes));
          const again = rerun(k, req.ship, stitcher.exactStart());
          queue = again.q;
          decoder = again.d;
          job = again.id;
          first = await queue.next();
          if (gen !== generation) continue outer;
        }
        let e = first;
        for (;;) {
          if (e.type === 'error') {
            if (e.error instanceof Restart) continue outer;
            throw e.error instanceof Cancelled ? new Error(`partition ${k} was cancelled`) : e.error;
          }
          if (e.type === 'rows') {
            const chunks = stitcher.rowsOf(e.chunks, e.marks);
            const d = decoder;
            const j = job;
            const bytes = e.bytes;
            await deliver(chunks, () => d.credit(j, bytes));
            if (gen !== generation) continue outer;
          } else if (e.type === 'done') {
            let outcome = e.outcome;
            addReads(outcome);
            const why = stitcher.needsExactRun(outcome);
            if (why) {
              report.reruns[why]++;
              const again = rerun(k, [], stitcher.exactStart()).q;
              for (;;) {
                const r = await again.next();
                if (gen !== generation) continue outer;
                if (r.type === 'error') throw r.error;
                if (r.type === 'done') {
                  outcome = r.outcome;
                  addReads(outcome);
                  break;
                }
              }
            }
            stitcher.endPartition(outcome);
            req.log?.(`partition ${k} merged`);
            kick(); // the next partitions may start now
            break;
          }
          e = await queue.next();
          if (gen !== generation) continue outer;
        }
      }
    }
    await framing;
    if (fatal) throw fatal;
    // 3. every processor's held-back switch, newThreadId null
    const last = stitcher.finish();
    if (last.cswitch.length && req.ship.includes('cswitch')) await deliver(last, () => {});
    await chain;
    req.onProgress?.('decode', size, size);
    return { size, rows: stitcher.rows, buffers: table.list(), reads, framingIssues, framingCounters, engine: stitcher.state() };
  } finally {
    for (const [j, d] of running) d.cancel(j); // this thread's decoders stop at their next rows or read
    for (const w of workers) w.port.terminate();
  }
}
