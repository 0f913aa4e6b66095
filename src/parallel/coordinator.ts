// A decode split across threads, with the rows, their order and the counters of one thread (the phases
// are the methods of ParallelDecode named in brackets):
//
// 0. the decoders start: workers (their scripts load meanwhile) and, in Node, this thread's (startDecoders);
// 1. the input is framed here (framing.ts), and while it is, partitions are cut from what is framed so far
//    (partitioning.ts: a bet that buffers far apart in the file are in SequenceNumber order, checked when
//    framing ends; if it lost, every partition is dropped before anything was handed on, and the decode
//    starts over from the real order); the rest of the decode order is cut when framing ends (frame,
//    cutPartitions, startOver);
// 2. decoders — workers, each its own WebAssembly instance of one compiled module, and in Node this thread
//    too (decoders.ts) — take the partitions one at a time, in order, as they become free; the first one
//    alone, the others once it is merged (they start from its trace-wide state and kinds: partition.ts)
//    (dispatch);
// 3. the partitions' rows are handed on in decode order, partition after partition, each made what one
//    engine would have produced by the stitcher (stitch.ts), which also merges the counters, issues and
//    kinds; a partition whose guessed start was wrong, or whose outcome the stitching cannot repair, is
//    decoded again here from the exact state; nothing is handed on before framing ended and the bet held
//    (handOn, exactOutcome, deliver);
// 4. last, every processor's held-back compact switch (newThreadId null) (finish); whatever still runs
//    ends, failed or not (stop).
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
export function decodeParallel(req: ParallelRequest): Promise<DriverResult> {
  return new ParallelDecode(req).run();
}

/** A row chunk waiting to be handed on, and what hands its bytes back to its decoder once consumed. */
interface Delivery {
  chunks: Chunks;
  credit: () => void;
}

/**
 * One parallel decode, in phases (the file comment's steps): startDecoders, then frame (partitions cut while
 * it goes on; cutPartitions when it ends, or startOver if the bet lost), dispatch (free decoders take the
 * next partitions), handOn (each partition's events, stitched, to the consumer in order), finish (the
 * held-back switches and the result), stop (whatever still runs ends).
 */
class ParallelDecode {
  private readonly source: AsyncSource;
  private readonly host: ParallelHost | null;
  private readonly size: number;
  private readonly report: ParallelReport;
  private readonly guide: Guide;
  private readonly threads: number;
  private module!: WebAssembly.Module;

  // decoders: workers, this thread's (null: it decodes nothing), the one that decodes partitions again exactly
  private readonly workers: WorkerDecoder[] = [];
  /** free decoders (a worker twice: its next job is queued in it) */
  private readonly idle: Decoder[] = [];
  private local: LocalDecoder | null = null;
  private exact: LocalDecoder | null = null;
  /** workers wanted of the host */
  private wanted = 0;
  /** decoders the partitions are sized for */
  private decoders = 0;

  // what the consumer waits for: an event of a partition, a partition to exist, the end of framing
  private wake: (() => void) | null = null;
  private fatal: unknown = null;

  // framing
  private readonly table = new BufferTable();
  private readonly framingIssues: FramingIssue[] = [];
  private readonly framingCounters = new Array<number>(L.D_COUNTER_COUNT).fill(0);
  /** guided partitions cut while framing (null: cut once it ended, `partitions` or `cuts`) */
  private cutter: SpeculativeCuts | null = null;
  /** the decode order, once framing ended */
  private order: Uint32Array | null = null;
  /** the partitions are final (framing ended, the bet held or the decode started over) */
  private final = false;

  // partitions: bounds[k]..bounds[k + 1] (record indices while framing; decode positions once it ended)
  private bounds: number[] = [0];
  private queues: EventQueue[] = [];
  private jobDecoder: Decoder[] = [];
  private jobIds: number[] = [];
  private nextPartition = 0;
  private nextJob = 0;
  private stitcher = new Stitcher();
  /** input bytes each partition has decoded (a new array when the decode starts over) */
  private progress: number[] = [];
  /** bumped when the decode starts over (partitioning.ts: the bet on the file order lost) */
  private generation = 0;
  /** queues the consumer may be waiting on, and the jobs still running */
  private readonly live = new Set<EventQueue>();
  private readonly running = new Map<number, Decoder>();
  private readonly reads = { loads: 0, singles: 0, bytes: 0 };

  // rows are handed on in order, through one chain, once framing ended and the bet held
  private verified = false;
  private pending: Delivery[] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly req: ParallelRequest) {
    this.source = req.source;
    this.host = req.host;
    this.size = req.source.size;
    this.report = req.report ?? emptyReport();
    this.guide = req.guide ?? DEFAULT_GUIDE;
    this.threads = Math.max(1, Math.floor(req.threads));
  }

  async run(): Promise<DriverResult> {
    this.module = await loadWasmModule();
    try {
      this.startDecoders();
      const framing = this.frame();
      await this.handOn();
      await framing;
      if (this.fatal) throw this.fatal;
      return await this.finish();
    } finally {
      this.stop();
    }
  }

  // ---- decoders ----

  /** Takes (or spawns) the workers, whose scripts load while the input is framed, and this thread's decoder. */
  private startDecoders(): void {
    const { host, req, threads, workers, idle } = this;
    this.wanted = host ? (host.mainThreadDecodes ? threads - 1 : threads) : 0;
    const path = host?.filePathOf(this.source) ?? null;
    const where: WorkerSource = path !== null ? { kind: 'file', path } : { kind: 'remote' };
    for (let i = 0; i < this.wanted; i++) {
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
      workers.push(new WorkerDecoder(port, this.module, this.source, where, req.budget, (d) => this.workerReady(d), (d) => this.workerDead(d)));
    }
    this.report.workers = workers.length;
    req.log?.(`${workers.length} workers spawned`);
    if (!host) {
      // no workers (tests): every decoder in this thread, each its own engine, interleaved at their reads
      for (let i = 0; i < threads; i++) idle.push((this.local = new LocalDecoder(this.module, this.source, req.budget)));
    } else if (host.mainThreadDecodes || threads === 1 || workers.length === 0) {
      // its reads give other tasks a turn (FRAMING_SLICE_MS): the workers' messages — ready, rows, reads to
      // serve from an input in memory — are handled while this thread decodes, not only after it
      this.local = new LocalDecoder(this.module, workers.length > 0 ? yielding(this.source) : this.source, req.budget);
      idle.push(this.local);
    }
    this.decoders = host ? Math.max(1, this.local ? this.wanted + 1 : this.wanted) : threads;
  }

  private workerReady(d: WorkerDecoder): void {
    this.req.log?.(`worker ${this.workers.indexOf(d)} ready`);
    this.report.workersReady++;
    // two jobs at a time: the next one is queued in the worker, which goes on to it without a round trip
    this.idle.push(d, d);
    this.kick();
  }

  private workerDead(d: WorkerDecoder): void {
    const idle = this.idle;
    for (let at = idle.indexOf(d); at >= 0; at = idle.indexOf(d)) idle.splice(at, 1);
    this.kick();
  }

  /** Something changed (a decoder free, partitions cut, framing ended): dispatch, and wake the consumer. */
  private kick(): void {
    this.dispatch();
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  // ---- 1. framing, and the partitions cut from it ----

  /** Frames the input (the promise ends with framing); guided partitions are cut while it goes on. */
  private frame(): Promise<void> {
    const { req, source, size } = this;
    this.cutter = req.cuts || req.partitions ? null : new SpeculativeCuts(this.table, size, this.decoders, this.guide);
    const framing = runAsync(
      this.cutter ? yielding(source) : source,
      observed(frameBuffers(size, this.framingIssues, this.framingCounters, source.headerBatch, this.table), () => this.cutWhileFraming()),
      () => {},
      req.onProgress,
    ).then(
      () => this.framed(),
      (e: unknown) => {
        this.fatal = e;
        this.kick();
      },
    );
    framing.catch(() => {});
    return framing;
  }

  private cutWhileFraming(): void {
    if (this.cutter && this.cutter.update()) {
      this.bounds = [0, ...this.cutter.cuts];
      this.kick();
    }
  }

  /** Framing ended: the final partitions, then the rows held back go to the consumer. */
  private framed(): void {
    const o = decodeOrder(this.table);
    this.cutPartitions(o);
    this.req.log?.(`framed: ${o.length} buffers, ${this.bounds.length - 1} partitions${this.report.restarted ? ' (restart)' : ''}`);
    this.order = o;
    this.final = true;
    this.report.partitions = this.bounds.length - 1;
    this.verified = true;
    const flush = this.pending;
    this.pending = [];
    for (const p of flush) this.append(p);
    this.kick();
  }

  /** The partitions of decode order `o`: the speculative ones and the rest, or all again if the bet lost. */
  private cutPartitions(o: Uint32Array): void {
    const { table, cutter, req } = this;
    const n = o.length;
    if (cutter && !verifyCuts(table, cutter.cuts)) {
      this.startOver();
      this.bounds = guidedBounds(table.size, o, this.decoders, this.guide);
    } else if (cutter) {
      this.report.speculative = cutter.cuts.length;
      const last = cutter.cuts.length ? cutter.cuts[cutter.cuts.length - 1]! : 0;
      this.bounds = [0, ...cutter.cuts, ...guidedBounds(table.size, o, this.decoders, this.guide, last).filter((b) => b > last)];
      if (this.bounds[this.bounds.length - 1] !== n) this.bounds.push(n);
    } else {
      this.bounds = req.cuts
        ? [0, ...[...new Set(req.cuts)].filter((c) => c > 0 && c < n).sort((a, b) => a - b), n]
        : partitionBounds(table.size, o, req.partitions!);
    }
    if (this.bounds.length === 1) this.bounds.push(n); // no buffer at all: one empty partition
  }

  /** The bet lost: nothing was handed on; every partition is dropped, the decode starts over from the real order. */
  private startOver(): void {
    this.report.restarted = true;
    this.generation++;
    for (const [j, d] of this.running) d.cancel(j);
    for (const q of this.live) {
      q.discard((bytes) => q.credit?.(bytes));
      q.push({ type: 'error', error: new Restart() });
    }
    this.live.clear();
    for (const p of this.pending) p.credit();
    this.pending = [];
    this.queues = [];
    this.jobDecoder = [];
    this.jobIds = [];
    this.nextPartition = 0;
    this.stitcher = new Stitcher();
    this.progress = [];
  }

  // ---- 2. partitions to decoders ----

  /**
   * Gives free decoders the next partitions, in order: the first alone, the others once it is merged (they
   * start from its trace-wide state and kinds: stitch.ts guess()).
   */
  private dispatch(): void {
    const { idle, bounds, req } = this;
    while (idle.length && this.nextPartition < bounds.length - 1 && (this.nextPartition === 0 || this.stitcher.taken > 0)) {
      // a decoder with nothing to do first, then a worker's second slot (its next job, queued)
      let at = idle.findIndex((x) => this.mayTake(x) && !this.jobsOf(x));
      if (at < 0) at = idle.findIndex((x) => this.mayTake(x));
      if (at < 0) break;
      const d = idle.splice(at, 1)[0]!;
      if (d instanceof WorkerDecoder && d.dead) continue;
      const k = this.nextPartition++;
      this.queues[k] = new EventQueue();
      this.jobDecoder[k] = d;
      this.jobIds[k] = this.start(d, k, this.stitcher.guess(), req.ship, this.queues[k]!, true);
      req.log?.(`partition ${k} (${bounds[k + 1]! - bounds[k]!} buffers) to ${d instanceof WorkerDecoder ? `worker ${this.workers.indexOf(d)}` : 'this thread'}`);
    }
    // every worker failed to start and this thread does not decode: it does now
    if (this.nextPartition < bounds.length - 1 && idle.length === 0 && !this.local && this.workers.every((w) => w.dead)) {
      this.local = new LocalDecoder(this.module, this.source, req.budget);
      idle.push(this.local);
      this.dispatch();
    }
  }

  /** While this thread frames, it decodes nothing but a first partition no worker is ready for: framing cuts the partitions the workers wait for. */
  private mayTake(d: Decoder): boolean {
    return !this.host || this.final || d instanceof WorkerDecoder || this.nextPartition === 0;
  }

  private jobsOf(d: Decoder): number {
    let n = 0;
    for (const x of this.running.values()) if (x === d) n++;
    return n;
  }

  /** Starts partition k on decoder d from `st`, its events into q; `free`: d goes back to the idle ones when it ends. */
  private start(d: Decoder, k: number, st: PartitionStart, ship: readonly DecodedTableName[], q: EventQueue, free: boolean): number {
    const { req, source, size } = this;
    const id = this.nextJob++;
    const p = this.progress;
    this.live.add(q);
    q.credit = (bytes) => d.credit(id, bytes);
    this.running.set(id, d);
    const options = { bias: req.bias, windowBytes: req.windowBytes, drainRows: req.drainRows, turns: source.turns === true };
    d.run(id, jobOf(this.table, this.idsOf(k), k, st, size, options, ship), {
      started: (trace) => q.push({ type: 'started', trace }),
      rows: (chunks, marks, bytes) => {
        if (q.dropping) q.dropping(bytes);
        else q.push({ type: 'rows', chunks, marks, bytes });
      },
      progress: (done) => {
        p[k] = done;
        if (p === this.progress) this.reportProgress();
      },
      end: (e) => {
        this.running.delete(id);
        q.push(e);
        if (free) {
          this.idle.push(d);
          this.kick();
        }
      },
    });
    return id;
  }

  /** the buffers of partition k, in decode order */
  private idsOf(k: number): Uint32Array {
    const { order, bounds } = this;
    return order ? order.subarray(bounds[k]!, bounds[k + 1]!) : keySorted(this.table, bounds[k]!, bounds[k + 1]!);
  }

  /** Decodes partition k again in this thread from the exact state (its own engine). */
  private rerun(k: number, ship: readonly DecodedTableName[], st: PartitionStart): { q: EventQueue; d: Decoder; id: number } {
    const d = (this.exact ??= new LocalDecoder(this.module, this.source, this.req.budget));
    const q = new EventQueue();
    return { q, d, id: this.start(d, k, st, ship, q, false) };
  }

  private reportProgress(): void {
    let done = 0;
    for (const p of this.progress) done += p;
    this.req.onProgress?.('decode', Math.min(done, this.size), this.size);
  }

  // ---- 3. the partitions' rows, in order, stitched ----

  /** Hands on every partition's rows in order (from the start again after a restart). */
  private async handOn(): Promise<void> {
    for (;;) {
      const gen = this.generation;
      this.reads.loads = this.reads.singles = this.reads.bytes = 0;
      if (await this.handOnAll(gen)) return;
    }
  }

  /** Every partition of generation `gen`; false if the decode started over meanwhile. */
  private async handOnAll(gen: number): Promise<boolean> {
    for (let k = 0; ; k++) {
      const first = await this.nextEvent(k);
      if (gen !== this.generation) return false;
      if (first === null) return true;
      if (!(await this.handOnPartition(k, first, gen))) return false;
    }
  }

  /** The next event of partition k (null: there is no partition k), dispatching while waiting. */
  private async nextEvent(k: number): Promise<PartitionEvent | null> {
    for (;;) {
      if (this.fatal) throw this.fatal;
      this.dispatch();
      const queue = this.queues[k];
      if (queue) return queue.next();
      if (this.final && k >= this.bounds.length - 1) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Partition k's rows, stitched, then its outcome merged; false if the decode started over meanwhile. */
  private async handOnPartition(k: number, first: PartitionEvent, gen: number): Promise<boolean> {
    let queue = this.queues[k]!;
    let decoder = this.jobDecoder[k]!;
    let job = this.jobIds[k]!;
    if (first.type === 'started' && !this.stitcher.startMatches(first.trace)) {
      // the guessed trace-wide state is not what the partitions before leave: decode it again, exactly
      const d = decoder;
      const j = job;
      this.report.reruns.trace++;
      d.cancel(j);
      queue.discard((bytes) => d.credit(j, bytes));
      const again = this.rerun(k, this.req.ship, this.stitcher.exactStart());
      queue = again.q;
      decoder = again.d;
      job = again.id;
      first = await queue.next();
      if (gen !== this.generation) return false;
    }
    for (let e = first; ; ) {
      if (e.type === 'error') {
        if (e.error instanceof Restart) return false;
        throw e.error instanceof Cancelled ? new Error(`partition ${k} was cancelled`) : e.error;
      }
      if (e.type === 'rows') {
        const chunks = this.stitcher.rowsOf(e.chunks, e.marks);
        const d = decoder;
        const j = job;
        const bytes = e.bytes;
        await this.deliver(chunks, () => d.credit(j, bytes));
        if (gen !== this.generation) return false;
      } else if (e.type === 'done') {
        const outcome = await this.exactOutcome(k, e.outcome, gen);
        if (outcome === null) return false;
        this.stitcher.endPartition(outcome);
        this.req.log?.(`partition ${k} merged`);
        this.kick(); // the next partitions may start now
        return true;
      }
      e = await queue.next();
      if (gen !== this.generation) return false;
    }
  }

  /**
   * Partition k's outcome, or the one of its decode again from the exact state where the stitching cannot
   * repair it (only the outcome: its rows were handed on); null if the decode started over meanwhile.
   */
  private async exactOutcome(k: number, outcome: PartitionOutcome, gen: number): Promise<PartitionOutcome | null> {
    this.addReads(outcome);
    const why = this.stitcher.needsExactRun(outcome);
    if (!why) return outcome;
    this.report.reruns[why]++;
    const again = this.rerun(k, [], this.stitcher.exactStart()).q;
    for (;;) {
      const r = await again.next();
      if (gen !== this.generation) return null;
      if (r.type === 'error') throw r.error;
      if (r.type === 'done') {
        this.addReads(r.outcome);
        return r.outcome;
      }
    }
  }

  private addReads(o: PartitionOutcome): void {
    this.reads.loads += o.reads.loads;
    this.reads.singles += o.reads.singles;
    this.reads.bytes += o.reads.bytes;
  }

  /** Rows to the consumer, after those before them; held back until framing ended and the bet held. */
  private deliver(chunks: Chunks, credit: () => void): Promise<void> {
    if (!this.verified) {
      this.pending.push({ chunks, credit });
      return Promise.resolve();
    }
    return this.append({ chunks, credit });
  }

  private append(p: Delivery): Promise<void> {
    this.chain = this.chain.then(async () => {
      await this.req.onChunks(p.chunks);
      p.credit();
    });
    this.chain.catch(() => {}); // awaited by the consumer; never an unhandled rejection meanwhile
    return this.chain;
  }

  // ---- 4. the end ----

  /** Every processor's held-back switch (newThreadId null), then the result. */
  private async finish(): Promise<DriverResult> {
    const last = this.stitcher.finish();
    if (last.cswitch.length && this.req.ship.includes('cswitch')) await this.deliver(last, () => {});
    await this.chain;
    this.req.onProgress?.('decode', this.size, this.size);
    const { size, reads, framingIssues, framingCounters } = this;
    return { size, rows: this.stitcher.rows, buffers: this.table.list(), reads, framingIssues, framingCounters, engine: this.stitcher.state() };
  }

  /** This thread's decoders stop at their next rows or read; the workers end. */
  private stop(): void {
    for (const [j, d] of this.running) d.cancel(j);
    for (const w of this.workers) w.port.terminate();
  }
}
