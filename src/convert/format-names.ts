// The formats `convert` writes, by name: what the CLI lists in its help without loading the writers
// (formats.ts and what it imports load with the command).
export type DatasetFormat = 'parquet' | 'arrow' | 'csv' | 'jsonl';
export type ConvertFormat = DatasetFormat | 'perfetto';
export const CONVERT_FORMATS: readonly ConvertFormat[] = ['parquet', 'arrow', 'csv', 'jsonl', 'perfetto'];
