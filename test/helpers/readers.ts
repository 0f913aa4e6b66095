// Independent Parquet readers for the tests: DuckDB (@duckdb/node-api, its own C++ reader) and hyparquet
// (pure JavaScript, with hyparquet-compressors for zstd, lz4 and gzip).
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
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
  return r.getRowObjects() as Record<string, unknown>[];
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

/** Every row of a Parquet file read by hyparquet. */
export async function hyparquetRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return (await parquetReadObjects({ file, compressors })) as Record<string, unknown>[];
}

export function hyparquetMetadata(bytes: Uint8Array) {
  return parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}

export function readBytes(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}
