// Independent Parquet readers for the tests: DuckDB (@duckdb/node-api, its own C++ reader) and hyparquet
// (pure JavaScript, with hyparquet-compressors for zstd, lz4 and gzip).
import { DuckDBInstance, DuckDBTimestampNanosecondsValue, type DuckDBConnection } from '@duckdb/node-api';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { readFileSync } from 'node:fs';

let connection: Promise<DuckDBConnection> | null = null;

export function duck(): Promise<DuckDBConnection> {
  connection ??= DuckDBInstance.create(':memory:').then((db) => db.connect());
  return connection;
}

function quote(path: string): string {
  return `'${path.replace(/'/g, "''")}'`;
}

/** Every row of a Parquet file in file order, read by DuckDB (UBIGINT/BIGINT as bigint, NULL as null). */
export async function duckRows(path: string): Promise<Record<string, unknown>[]> {
  const c = await duck();
  const r = await c.runAndReadAll(`SELECT * EXCLUDE (file_row_number) FROM read_parquet(${quote(path)}, file_row_number = true) ORDER BY file_row_number`);
  // a TIMESTAMP_NS as its exact nanoseconds since 1970
  return r.getRowObjects().map((row) => {
    for (const k of Object.keys(row)) if (row[k] instanceof DuckDBTimestampNanosecondsValue) row[k] = (row[k] as DuckDBTimestampNanosecondsValue).nanos;
    return row;
  }) as Record<string, unknown>[];
}

/** DuckDB's column types of a Parquet file: name → type name (UBIGINT, VARCHAR, …). */
export async function duckTypes(path: string): Promise<Record<string, string>> {
  const c = await duck();
  const r = await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quote(path)})`);
  return Object.fromEntries(r.getRowObjects().map((row) => [row.column_name as string, row.column_type as string]));
}

export interface ChunkMeta {
  row_group_id: bigint;
  row_group_num_rows: bigint;
  path_in_schema: string;
  stats_min_value: string | null;
  stats_max_value: string | null;
  stats_null_count: bigint | null;
  compression: string;
  encodings: string;
}

/** DuckDB's parquet_metadata(): one row per column chunk. */
export async function duckMetadata(path: string): Promise<ChunkMeta[]> {
  const c = await duck();
  const r = await c.runAndReadAll(`SELECT * FROM parquet_metadata(${quote(path)}) ORDER BY row_group_id, column_id`);
  return r.getRowObjects() as unknown as ChunkMeta[];
}

/**
 * hyparquet-compressors' LZ4_RAW reads past the end of an empty LZ4 block (the one token 0x00 that LZ4
 * encoders write for no bytes: a dictionary page of a column chunk whose cells are all null) and throws
 * "lz4 offset out of range 0"; the LZ4 reference and DuckDB read it as no bytes. Only that case is
 * answered here, every other page goes to hyparquet-compressors.
 */
const COMPRESSORS = {
  ...compressors,
  LZ4_RAW: (input: Uint8Array, outputLength: number) =>
    outputLength === 0 && input.length === 1 && input[0] === 0 ? new Uint8Array(0) : compressors.LZ4_RAW!(input, outputLength),
};

/** Every row of a Parquet file read by hyparquet. */
export async function hyparquetRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  // timestamps as their exact nanoseconds (hyparquet's default is a Date: milliseconds)
  return (await parquetReadObjects({ file, compressors: COMPRESSORS, parsers: { timestampFromNanoseconds: (ns: bigint) => ns } })) as Record<string, unknown>[];
}

export function hyparquetMetadata(bytes: Uint8Array) {
  return parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}

export function readBytes(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}

/**
 * An RFC 4180 CSV reader written for the tests (no code shared with src/output/text.ts): rows of cells,
 * quoted cells with doubled quotes, commas and line breaks inside; `quoted[i][j]` says whether a cell was
 * quoted. A file ends with a line break (no empty last row).
 */
export function parseCsv(text: string): { rows: string[][]; quoted: boolean[][] } {
  const rows: string[][] = [];
  const quoted: boolean[][] = [];
  let row: string[] = [];
  let rowQuoted: boolean[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    let cell = '';
    let q = false;
    if (text[i] === '"') {
      q = true;
      i++;
      for (;;) {
        if (i >= n) throw new Error('CSV: a quoted cell does not end');
        const ch = text[i]!;
        if (ch === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
          } else {
            i++;
            break;
          }
        } else {
          cell += ch;
          i++;
        }
      }
    } else {
      while (i < n && text[i] !== ',' && text[i] !== '\n') cell += text[i++];
    }
    row.push(cell);
    rowQuoted.push(q);
    if (i >= n) throw new Error('CSV: the last line has no line break');
    if (text[i] === ',') i++;
    else if (text[i] === '\n') {
      i++;
      rows.push(row);
      quoted.push(rowQuoted);
      row = [];
      rowQuoted = [];
    } else throw new Error(`CSV: '${text[i]}' after a quoted cell at ${i}`);
  }
  return { rows, quoted };
}
