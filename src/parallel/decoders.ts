// The decoders of a parallel decode (coordinator.ts): one in this thread (its own engine, the coordinator's
// source) or one per worker (messages, protocol.ts). Both run partition jobs (partition.ts) one at a time,
// hand on their events — started, rows, progress, done or error — and send rows ahead of the consumer only
// up to a budget of bytes not yet credited back.
import { runAsync, type AsyncSource } from '../decode/runners.js';
import type { Chunks } from '../tables/schema.js';
import type { WasmEngine } from '../engine/wasm/engine.js';
import { createWasmEngine, releaseEngine } from '../engine/engines.js';
import type { WorkerPort } from './host.js';
import { partitionSteps, type PartitionJob, type PartitionOutcome, type PlaceholderMark } from './partition.js';
import { chunkBytes, deserializeError, serializeError, type FromWorker, type WorkerSource } from './protocol.js';
import type { TraceState } from './state.js';

export type PartitionEvent =
  | { type: 'started'; trace: TraceState }
  | { type: 'rows'; chunks: Chunks; marks: PlaceholderMark[]; bytes: number }
  | { type: 'done'; outcome: PartitionOutcome }
  | { type: 'error'; error: Error };

/** The events of one job, in order, for the consumer. */
export class EventQueue {
  private readonly items: PartitionEvent[] = [];
  private waiter: ((e: PartitionEvent) => void) | null = null;
  push(e: PartitionEvent): void {
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w(e);
    } else this.items.push(e);
  }
  next(): Promise<PartitionEvent> {
    const e = this.items.shift();
    if (e) return Promise.resolve(e);
    return new Promise((resolve) => (this.waiter = resolve));
  }
  /** Drops the rows waiting (handing their bytes to `credit`); later rows are dropped as they come. */
  discard(credit: (bytes: number) => void): void {
    this.dropping = credit;
    for (const e of this.items.splice(0)) if (e.type === 'rows') credit(e.bytes);
  }
  dropping: ((bytes: number) => void) | null = null;
  /** gives bytes of the job's rows back to its decoder (set by the coordinator) */
  credit: ((bytes: number) => void) | null = null;
}

export interface JobSink {
  started(trace: TraceState): void;
  rows(chunks: Chunks, marks: PlaceholderMark[], bytes: number): void;
  progress(done: number): void;
  /** the job ended (done or error); the decoder is free again */
  end(e: { type: 'done'; outcome: PartitionOutcome } | { type: 'error'; error: Error }): void;
}

export interface Decoder {
  run(job: number, spec: PartitionJob, sink: JobSink): void;
  credit(job: number, bytes: number): void;
  cancel(job: number): void;
}

export class Cancelled extends Error {}

/** A decoder in this thread: its own engine instance, the coordinator's source. */
export class LocalDecoder implements Decoder {
  private engine: WasmEngine | null = null;
  private readonly jobs = new Map<number, { cancelled: boolean }>();
  /** bytes of rows handed on and not yet consumed, over all jobs */
  private outstanding = 0;
  private wake: (() => void) | null = null;

  constructor(
    private readonly module: WebAssembly.Module,
    private readonly source: AsyncSource,
    private readonly budget: number,
  ) {}

  run(id: number, spec: PartitionJob, sink: JobSink): void {
    const job = { cancelled: false };
    this.jobs.set(id, job);
    try {
      this.engine ??= createWasmEngine(this.module);
    } catch (e) {
      this.jobs.delete(id);
      queueMicrotask(() => sink.end({ type: 'error', error: e instanceof Error ? e : new Error(String(e)) }));
      return;
    }
    const marks = { marks: [] as PlaceholderMark[], started: (t: TraceState) => sink.started(t) };
    runAsync(
      this.source,
      partitionSteps(this.engine, spec, marks),
      async (chunks) => {
        if (job.cancelled) throw new Cancelled();
        const m = marks.marks.splice(0);
        const bytes = chunkBytes(chunks);
        if (bytes === 0 && m.length === 0) return;
        sink.rows(chunks, m, bytes);
        this.outstanding += bytes;
        while (this.outstanding > this.budget && !job.cancelled) await new Promise<void>((wake) => (this.wake = wake));
        if (job.cancelled) throw new Cancelled();
      },
      (_phase, done) => sink.progress(done),
    ).then(
      (outcome) => {
        this.ended(id);
        sink.end({ type: 'done', outcome });
      },
      (error: unknown) => {
        this.ended(id);
        sink.end({ type: 'error', error: error instanceof Error ? error : new Error(String(error)) });
      },
    );
  }

  /** A job ended: with none left, the engine goes back to the pool (the rows handed on are copies). */
  private ended(id: number): void {
    this.jobs.delete(id);
    if (this.jobs.size === 0 && this.engine) {
      releaseEngine(this.engine);
      this.engine = null;
    }
  }

  credit(_id: number, bytes: number): void {
    this.outstanding -= bytes;
    this.wakeUp();
  }

  cancel(id: number): void {
    const j = this.jobs.get(id);
    if (!j) return;
    j.cancelled = true;
    this.wakeUp();
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }
}

/** A decoder in a worker: messages to and from it, reads served from the coordinator's source. */
export class WorkerDecoder implements Decoder {
  ready = false;
  dead: Error | null = null;
  private readonly sinks = new Map<number, JobSink>();

  constructor(
    readonly port: WorkerPort,
    module: WebAssembly.Module,
    private readonly source: AsyncSource,
    private readonly where: WorkerSource,
    private readonly budget: number,
    onReady: (d: WorkerDecoder) => void,
    onDead: (d: WorkerDecoder, e: Error) => void,
  ) {
    port.onMessage((m: FromWorker) => {
      if (m.t === 'ready') {
        this.ready = true;
        onReady(this);
        return;
      }
      if (m.t === 'fatal') {
        this.die(deserializeError(m.error), onDead);
        return;
      }
      if (m.t === 'read') {
        void this.serveRead(m.id, m.position, m.length);
        return;
      }
      const sink = this.sinks.get(m.job);
      if (!sink) return;
      if (m.t === 'started') sink.started(m.trace);
      else if (m.t === 'rows') sink.rows(m.chunks, m.marks, m.bytes);
      else if (m.t === 'progress') sink.progress(m.done);
      else if (m.t === 'done') {
        this.sinks.delete(m.job);
        sink.end({ type: 'done', outcome: m.outcome });
      } else if (m.t === 'error') {
        this.sinks.delete(m.job);
        sink.end({ type: 'error', error: m.error.name === 'Cancelled' ? new Cancelled() : deserializeError(m.error) });
      }
    });
    port.onFailure((e) => this.die(e, onDead));
    port.post({ t: 'init', module });
  }

  private die(e: Error, onDead: (d: WorkerDecoder, e: Error) => void): void {
    if (this.dead) return;
    this.dead = e;
    for (const [id, sink] of this.sinks) {
      this.sinks.delete(id);
      sink.end({ type: 'error', error: e });
    }
    onDead(this, e);
  }

  private async serveRead(id: number, position: number, length: number): Promise<void> {
    try {
      const b = new Uint8Array(Math.max(0, Math.min(length, this.source.size - position)));
      const n = await this.source.readInto(position, b);
      this.port.post({ t: 'data', id, bytes: b.subarray(0, n), error: null }, [b.buffer]);
    } catch (e) {
      this.port.post({ t: 'data', id, bytes: null, error: serializeError(e) });
    }
  }

  run(id: number, spec: PartitionJob, sink: JobSink): void {
    if (this.dead) {
      sink.end({ type: 'error', error: this.dead });
      return;
    }
    this.sinks.set(id, sink);
    const transfer = [spec.fileOffset.buffer, spec.size.buffer, spec.cpu.buffer, spec.order.buffer] as ArrayBuffer[];
    try {
      this.port.post({ t: 'job', job: id, spec, source: this.where, budget: this.budget }, transfer);
    } catch (e) {
      // not from inside the caller's dispatch: later
      this.sinks.delete(id);
      queueMicrotask(() => sink.end({ type: 'error', error: e instanceof Error ? e : new Error(String(e)) }));
    }
  }

  credit(id: number, bytes: number): void {
    if (!this.dead) this.port.post({ t: 'credit', job: id, bytes });
  }

  cancel(id: number): void {
    if (!this.dead) this.port.post({ t: 'cancel', job: id });
  }
}
