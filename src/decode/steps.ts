// The protocol between the decode (a generator: framing.ts, decode-steps.ts) and the runners
// (runners.ts) that do its I/O synchronously over bytes in memory or asynchronously over files and Blobs.
// The decode yields a step; the runner carries it out and, for a request, writes `result` into the very
// step object before resuming the generator — so every answer is typed, with no casts.
import type { Chunks } from '../tables/schema.js';

/** bytes at `position` (fewer at the end of the input) */
export interface ReadStep {
  kind: 'read';
  position: number;
  length: number;
  result: Uint8Array;
}
/** `length` bytes at each position (buffer headers, read in batches) */
export interface ReadManyStep {
  kind: 'readMany';
  positions: number[];
  length: number;
  result: Uint8Array[];
}
/** bytes at `position` into `target` (the engine's input window); result = bytes placed */
export interface LoadStep {
  kind: 'load';
  position: number;
  target: Uint8Array;
  result: number;
}
/**
 * Start reading into `target` now; the 'load' of the same position and target gets the bytes.
 * result: true if the runner reads ahead (async runners), false if it ignores the step.
 */
export interface PrefetchStep {
  kind: 'prefetch';
  position: number;
  target: Uint8Array;
  result: boolean;
}
/** rows of every table for the consumer */
export interface RowsStep {
  kind: 'rows';
  chunks: Chunks;
}
export interface ProgressStep {
  kind: 'progress';
  phase: 'frame' | 'decode';
  done: number;
  total: number;
}

/**
 * A point between buffers where the decode may let other tasks run: an async runner whose source reads
 * only when this thread gives other tasks a turn (AsyncSource.turns: Blob readers) takes one here while a
 * read ahead is in flight, at most every TURN_MS. Yielded every TURN_BYTES of input decoded.
 */
export interface TurnStep {
  kind: 'turn';
}

export type Step = ReadStep | ReadManyStep | LoadStep | PrefetchStep | RowsStep | ProgressStep | TurnStep;

/** bytes of input decoded between two turn steps */
export const TURN_BYTES = 256 << 10;
/** the one turn step (it carries nothing) */
export const TURN: TurnStep = { kind: 'turn' };

/** A piece of the decode: yields steps, returns R. */
export type Steps<R> = Generator<Step, R, void>;

const NO_BYTES = new Uint8Array(0);

export function* read(position: number, length: number): Steps<Uint8Array> {
  const step: ReadStep = { kind: 'read', position, length, result: NO_BYTES };
  yield step;
  return step.result;
}

export function* readMany(positions: number[], length: number): Steps<Uint8Array[]> {
  const step: ReadManyStep = { kind: 'readMany', positions, length, result: [] };
  yield step;
  return step.result;
}

export function* load(position: number, target: Uint8Array): Steps<number> {
  const step: LoadStep = { kind: 'load', position, target, result: 0 };
  yield step;
  return step.result;
}

export function* prefetch(position: number, target: Uint8Array): Steps<boolean> {
  const step: PrefetchStep = { kind: 'prefetch', position, target, result: false };
  yield step;
  return step.result;
}
