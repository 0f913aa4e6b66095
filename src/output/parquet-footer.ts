// Reads the row counts back from the footer of a Parquet file we wrote: the footer is a Thrift
// compact-protocol FileMetaData (parquet.thrift: 3 num_rows, 4 row_groups; RowGroup: 3 num_rows), followed
// by its u32 length and "PAR1". The writer checks it against the rows it was given (parquet-wasm's streaming
// writer does not report errors of individual batches). Only the fields needed are decoded; the others are
// skipped by type. Bad input throws a RangeError naming the offset.

const PAR1 = 0x31524150;

export interface ParquetFooter {
  /** FileMetaData.num_rows */
  readonly rows: number;
  /** num_rows of each row group, in order */
  readonly rowGroupRows: number[];
}

// compact protocol type ids
const T_TRUE = 1;
const T_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;
const MAX_DEPTH = 64;

class CompactReader {
  pos: number;
  constructor(
    private readonly b: Uint8Array,
    start: number,
    private readonly end: number,
  ) {
    this.pos = start;
  }

  private fail(what: string): never {
    throw new RangeError(`parquet footer: ${what} at offset ${this.pos}`);
  }

  byte(): number {
    if (this.pos >= this.end) this.fail('unexpected end');
    return this.b[this.pos++]!;
  }

  /** unsigned varint (exact up to 2^53) */
  varint(): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const x = this.byte();
      v += (x & 0x7f) * scale;
      if ((x & 0x80) === 0) return v;
      scale *= 128;
    }
    return this.fail('varint longer than 10 bytes');
  }

  zigzag(): number {
    const u = this.varint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  skip(type: number, depth: number): void {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        return; // a struct field's boolean is in its header (list elements read one byte: see list())
      case T_BYTE:
        this.byte();
        return;
      case T_I16:
      case T_I32:
      case T_I64:
        this.varint();
        return;
      case T_DOUBLE:
        this.advance(8);
        return;
      case T_BINARY:
        this.advance(this.varint());
        return;
      case T_LIST:
      case T_SET:
        this.list((t) => this.skip(t, depth + 1));
        return;
      case T_MAP: {
        const n = this.varint();
        if (n === 0) return;
        const kv = this.byte();
        for (let i = 0; i < n; i++) {
          this.skipElement(kv >>> 4, depth + 1);
          this.skipElement(kv & 15, depth + 1);
        }
        return;
      }
      case T_STRUCT:
        this.struct(() => false, depth + 1);
        return;
      default:
        this.fail(`unknown type ${type}`);
    }
  }

  private skipElement(type: number, depth: number): void {
    if (type === T_TRUE || type === T_FALSE) this.byte();
    else this.skip(type, depth);
  }

  private advance(n: number): void {
    if (n > this.end - this.pos) this.fail(`${n} bytes past the end`);
    this.pos += n;
  }

  /** Reads a list header and calls `element` with the element type for each element. */
  list(element: (type: number) => void): number {
    const h = this.byte();
    const n = h >>> 4 === 15 ? this.varint() : h >>> 4;
    const type = h & 15;
    for (let i = 0; i < n; i++) {
      if (type === T_TRUE || type === T_FALSE) this.byte();
      else element(type);
    }
    return n;
  }

  /** Walks a struct: `field(id, type)` returns true when it consumed the value, else it is skipped. */
  struct(field: (id: number, type: number) => boolean, depth: number): void {
    let id = 0;
    for (;;) {
      const h = this.byte();
      const type = h & 15;
      if (type === 0) return; // STOP
      const delta = h >>> 4;
      id = delta === 0 ? this.zigzag() : id + delta;
      if (!field(id, type)) this.skip(type, depth);
    }
  }
}

/** The row counts of a complete Parquet file's footer (`bytes` ends with the file's last byte). */
export function readParquetFooter(bytes: Uint8Array): ParquetFooter {
  const n = bytes.length;
  if (n < 12) throw new RangeError(`parquet footer: ${n} bytes, too short for a Parquet file end`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, n);
  if (dv.getUint32(n - 4, true) !== PAR1) throw new RangeError('parquet footer: the file does not end with PAR1');
  const len = dv.getUint32(n - 8, true);
  if (len > n - 8) throw new RangeError(`parquet footer: length ${len} exceeds the ${n - 8} bytes before it`);
  const r = new CompactReader(bytes, n - 8 - len, n - 8);
  let rows = -1;
  const rowGroupRows: number[] = [];
  r.struct((id, type) => {
    if (id === 3 && type === T_I64) {
      rows = r.zigzag();
      return true;
    }
    if (id === 4 && type === T_LIST) {
      r.list((t) => {
        if (t !== T_STRUCT) return r.skip(t, 1);
        let groupRows = -1;
        r.struct((gid, gtype) => {
          if (gid === 3 && gtype === T_I64) {
            groupRows = r.zigzag();
            return true;
          }
          return false;
        }, 2);
        rowGroupRows.push(groupRows);
      });
      return true;
    }
    return false;
  }, 0);
  if (rows < 0) throw new RangeError('parquet footer: FileMetaData has no num_rows');
  return { rows, rowGroupRows };
}
