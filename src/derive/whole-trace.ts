// The derived tables made from a whole decode after it (WHOLE_TRACE_TABLE_NAMES: threadStates, stacks,
// stackFrames), by name — for the callers that go over every table of the registry.
import { WHOLE_TRACE_TABLE_NAMES, type TableName } from '../tables/schema.js';
import type { Table } from '../tables/table.js';
import type { DecodedTables } from '../tables/table.js';
import { threadStates } from './thread-states.js';
import { stacksOfTrace } from './stack-tables.js';

export type WholeTraceTableName = (typeof WHOLE_TRACE_TABLE_NAMES)[number];

export function isWholeTraceTable(name: TableName): name is WholeTraceTableName {
  return (WHOLE_TRACE_TABLE_NAMES as readonly string[]).includes(name);
}

/** Table `name` (threadStates, stacks or stackFrames) of a whole decode's tables. */
export function wholeTraceTable<T extends WholeTraceTableName>(r: DecodedTables & { threads: Table<'threads'>; images: Table<'images'> }, name: T): Table<T> {
  return (name === 'threadStates' ? threadStates(r) : stacksOfTrace(r)[name as 'stacks' | 'stackFrames']) as Table<T>;
}
