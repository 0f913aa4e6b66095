// The first pass of a streamed decode whose rows carry columns known only after the decode — convert, dump,
// cpu --waits, the page's downloads (docs/design/stacks.md): a decode of only the stack tables and the lifetimes' events
// the fill needs (StreamOptions.tables: the other tables' events are not decoded, drains without their rows
// are dropped uncopied), resolved by StackAttacher, and the lifetimes (images; threads when samples are written
// or asked for). The second, streamed pass then fills each chunk: the stackId of its
// cswitch, readythread and samples rows (fillStackIds: the same attachment as a whole decode's) and the
// samples' processId, imageName and imageOffset (SampleLifetimes, src/derive/lifetimes.ts: the same fill as a
// whole decode's); the stacks and stackFrames tables come from it, named through the image lifetimes.
// Browser-safe: the caller says how to stream its input (a file path, a Blob).
import type { StreamOptions, StreamResult } from '../decode/decode.js';
import { stackPointerSize, stackTables } from './stack-tables.js';
import { fillStackIds, StackAttacher, type ResolvedStacks, type StackedRows } from './stacks.js';
import { concatChunks, type ColumnChunk, type DecodedTableName, type TableName, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { SampleLifetimes } from './lifetimes.js';

const NO_ROWS = { cswitch: new Int32Array(0), readythread: new Int32Array(0), samples: new Int32Array(0) };

/** The tables whose rows need the first pass: those with a stackId (samples: also its process and image), and the stack tables themselves. */
const STACK_PASS_TABLES: readonly TableName[] = ['cswitch', 'readythread', 'samples', 'stacks', 'stackFrames'];

export function needsStackPass(tables: Iterable<TableName>): boolean {
  for (const t of tables) if (STACK_PASS_TABLES.includes(t)) return true;
  return false;
}

export class StackPass {
  private derived: { stacks: Table<'stacks'>; stackFrames: Table<'stackFrames'> } | null = null;
  private sampleLifetimes: SampleLifetimes | null = null;
  /** the attacher, or one over no stack events */
  private resolver: StackAttacher | null = null;
  /** the trace's image lifetimes (the frames' modules, the samples' images) */
  readonly images: Table<'images'>;
  /** the trace's thread lifetimes (the samples' processId; runStackPass's `threads`); null: not decoded */
  readonly threads: Table<'threads'> | null;
  /** the trace's process lifetimes (runStackPass's `processes`); empty when not decoded */
  readonly processes: Table<'processes'>;
  /** the trace's clock (null: its ticks do not convert) */
  readonly clock: StreamResult['clock'];
  /** fill the samples' processId, imageName and imageOffset (they are written) */
  private readonly samples: boolean;

  constructor(
    /** null: the trace has no stack events */
    private readonly attacher: StackAttacher | null,
    /** the stack events of the first pass (their pointer size names the frames) */
    readonly stackEvents: Table<'stackEvents'>,
    /** the first pass's result: its lifetimes and clock */
    first: Pick<StreamResult, 'images' | 'threads' | 'processes' | 'clock'>,
    /** what the first pass decoded: the thread lifetimes; the samples are written (their processId, image are filled) */
    decoded: { threads: boolean; samples: boolean },
  ) {
    this.images = first.images;
    this.threads = decoded.threads ? first.threads : null;
    this.processes = first.processes;
    this.clock = first.clock;
    this.samples = decoded.samples && decoded.threads;
  }

  /**
   * Fills the columns of the rows of a streamed chunk that a whole decode fills after it: the stackId of
   * its stacked rows (met in decode order, after the earlier chunks'), the samples' processId, imageName and
   * imageOffset.
   */
  fill(rows: StackedRows): void {
    if (this.attacher && !this.attacher.empty) fillStackIds(this.attacher, rows);
    if (this.samples && this.threads && rows.samples && rows.samples.length > 0) {
      this.sampleLifetimes ??= new SampleLifetimes(this.threads, this.images);
      this.sampleLifetimes.fill(rows.samples);
    }
  }

  /**
   * The stack id of each row of a chunk of `name` (-1: none), met in decode order after the earlier chunks'
   * (as fill() attaches them, without writing the rows' stackId).
   */
  stackIdsOf(name: 'cswitch' | 'readythread', rows: Table<'cswitch'> | Table<'readythread'>): Int32Array {
    if (!this.attacher || this.attacher.empty) return new Int32Array(rows.length).fill(-1);
    return this.attacher.attach(name, rows);
  }

  /**
   * The resolved stacks the rows are attached to: their ids and frames, fixed by the first pass (none without
   * stack events); its events and counts are those of the rows attached so far.
   */
  resolved(): ResolvedStacks {
    this.resolver ??= this.attacher ?? new StackAttacher(this.stackEvents, new Table('stackEventFrames', concatChunks('stackEventFrames', [])));
    return this.resolver.result(NO_ROWS);
  }

  /** The stacks and stackFrames tables (empty without stack events). */
  tables(): { stacks: Table<'stacks'>; stackFrames: Table<'stackFrames'> } {
    if (!this.derived) {
      this.derived = stackTables(this.resolved(), this.images, stackPointerSize(this.stackEvents));
    }
    return this.derived;
  }
}

/** What the first pass asks of a streamed decode of the trace (its rows, the tables it keeps). */
export type StackPassOptions = Required<Pick<StreamOptions, 'tables' | 'rows' | 'onRows'>>;

/**
 * Runs the first pass: `stream` decodes the trace with the options given (a path: streamFile; a Blob:
 * decodeStream); only the stack tables' rows are kept, with the lifetimes the fill needs: the image events
 * (the frames' and the samples' images), and the thread events when samples are among the `wanted` tables
 * written (their processId; default: every table) or `options.threads` asks for the thread lifetimes
 * (StackPass.threads), the process events when `options.processes` asks for their lifetimes (StackPass.processes). The other tables' events are not decoded (keepTables).
 */
export async function runStackPass(stream: (o: StackPassOptions) => Promise<StreamResult>, wanted?: Iterable<TableName>, options: { threads?: boolean; processes?: boolean } = {}): Promise<StackPass> {
  const samples = wanted === undefined || [...wanted].includes('samples');
  const threads = samples || options.threads === true;
  const lifetimes: DecodedTableName[] = ['imageEvents'];
  if (threads) lifetimes.push('threadEvents');
  if (options.processes) lifetimes.push('processEvents');
  const kept = { stackEvents: [] as ColumnChunk[], stackEventFrames: [] as ColumnChunk[] };
  const own = (t: Table): ColumnChunk => ({ length: t.length, columns: t.columns.map((c) => c.slice(0, t.length) as TypedColumn) });
  const res = await stream({
    // the result's lifetimes: images name the frames and the samples' addresses, threads give the samples' process
    tables: ['stackEvents', 'stackEventFrames', ...lifetimes],
    rows: 'borrow',
    onRows: (rows) => {
      if (rows.stackEvents.length) kept.stackEvents.push(own(rows.stackEvents));
      if (rows.stackEventFrames.length) kept.stackEventFrames.push(own(rows.stackEventFrames));
    },
  });
  const stackEvents = new Table('stackEvents', concatChunks('stackEvents', kept.stackEvents));
  const stackEventFrames = new Table('stackEventFrames', concatChunks('stackEventFrames', kept.stackEventFrames));
  return new StackPass(stackEvents.length ? new StackAttacher(stackEvents, stackEventFrames) : null, stackEvents, res, { threads, samples });
}
