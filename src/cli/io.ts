// The command line's paths and pipes: where the input comes from (a file, or a stream spooled to a
// temporary file), where the output goes (standard output, or a file written under a temporary name and
// renamed when complete), and the failures of both as one-line errors with the exit codes of Unix tools.
import { randomBytes } from 'node:crypto';
import { createReadStream, rmSync } from 'node:fs';
import { mkdir, open, realpath, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { decodeSync } from '../decode/decode.js';
import * as L from '../generated/layout.js';

/** Exit codes (README § Command line). */
export const EXIT = {
  ok: 0,
  /** the input cannot be decoded, the output cannot be written */
  error: 1,
  /** bad command line */
  usage: 2,
  /** a bug: an unexpected exception (EX_SOFTWARE) */
  internal: 70,
  /** standard output was closed by its reader (`| head`): 128 + SIGPIPE, as a shell reports a writer killed by it */
  outputClosed: 141,
  /** stopped by SIGHUP / SIGINT / SIGTERM: 128 + the signal's number */
  signal: { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 },
} as const;

/** An expected failure: printed as one line `etw-decode: <message>`, then exit with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message);
  }
}

/** Standard output was closed by its reader: the command stops quietly (exit 141). */
export class OutputClosed extends Error {
  constructor() {
    super('standard output closed');
  }
}

/** A line on stderr; stderr's own failures (closed by its reader) are ignored: there is nowhere to report them. */
export function note(text: string): void {
  process.stderr.write(`etw-decode: ${text}\n`);
}

/** What main() gives each command (cli/<command>.ts). */
export interface CommandContext {
  /** opens the command's input; main disposes of it when the command ends, and names it in errors */
  input(arg: string): Promise<Input>;
  /** the exit code when the command ends without an error (a file of many failed: 1) */
  setExit(code: number): void;
}

/** The reason of a failed system call, in words ("no space left on device"). */
export function errnoText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a component of the path is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOSPC':
      return 'no space left on device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EROFS':
      return 'read-only file system';
    case 'EFBIG':
      return 'file too large';
    case 'EIO':
      return 'input/output error';
    case 'ENXIO':
      return 'no such device or address (a socket?)';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files';
    case 'ENAMETOOLONG':
      return 'file name too long';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'EPIPE':
      return 'broken pipe';
  }
  const message = String(err?.message ?? e);
  // "ENOSPC: no space left on device, write" → "no space left on device"
  return message.replace(/^[A-Z0-9_]+: /, '').replace(/, \w+( '.*')?$/, '');
}

// ---- cleanup on signals: temporary files never outlive the command

const cleanups = new Set<() => void>();
let signalsHooked = false;

function onSignal(signal: keyof typeof EXIT.signal): void {
  for (const c of cleanups) {
    try {
      c();
    } catch {
      // best effort: the process is going away
    }
  }
  process.exit(EXIT.signal[signal]);
}

/** Registers a synchronous cleanup run when SIGHUP/SIGINT/SIGTERM stop the command; returns its removal. */
export function atSignal(cleanup: () => void): () => void {
  if (!signalsHooked) {
    signalsHooked = true;
    for (const s of ['SIGHUP', 'SIGINT', 'SIGTERM'] as const) process.on(s, () => onSignal(s));
  }
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

// ---- input

/** The input of a command: a path the decoder can read at random. */
export interface Input {
  /** the file to decode: the argument itself, or the spool of a stream */
  readonly path: string;
  /** how messages name the input */
  readonly name: string;
  /** a message about `path` rewritten to name the input */
  describe(message: string): string;
  /** removes the spool, if any */
  dispose(): Promise<void>;
}

/**
 * Opens the command's input. `-` is standard input; a path that is neither a regular file nor a
 * directory (a FIFO, a character device such as /dev/stdin) is a stream too. A stream cannot be read at
 * random, so it is copied to a temporary file (in os.tmpdir(), removed when the command ends), checked
 * to start like an ETL file as soon as its first buffer has arrived, and decoded from there. Regular
 * files, missing paths and directories are left to the decoder's own checks (`readTraceInfo`).
 */
export async function openInput(arg: string, stdin: NodeJS.ReadStream = process.stdin): Promise<Input> {
  if (arg === '-') {
    if (stdin.isTTY) {
      throw new CliError('standard input is a terminal: pipe a trace into it (… | etw-decode summary -) or name a file', EXIT.usage);
    }
    return spool(stdin, 'standard input');
  }
  const st = await stat(arg).catch(() => null);
  if (st === null || st.isFile() || st.isDirectory()) {
    return { path: arg, name: arg, describe: (m) => m, dispose: async () => {} };
  }
  // open() of a FIFO waits for its writer, as `cat` does
  return spool(createReadStream(arg), arg);
}

/**
 * Bytes of a stream needed to check its first buffer as the decoder checks a file's: the buffer header,
 * then BufferSize bytes; when BufferSize is out of range, as many bytes as the largest buffer (so the
 * error names the same limits as for a file).
 */
function headNeeded(head: Uint8Array): number {
  const minimum = L.WMI_BUFFER_HEADER_SIZE + 8;
  if (head.length < minimum) return minimum;
  const size = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(L.BUF_BUFFER_SIZE, true);
  return size < L.WMI_BUFFER_HEADER_SIZE || size > L.MAX_BUFFER_SIZE ? L.MAX_BUFFER_SIZE : Math.max(size, minimum);
}

/** Throws the decoder's EtlError when `head` (the first buffer, or the whole input if shorter) is not an ETL header buffer. */
function checkHead(head: Uint8Array): void {
  decodeSync(head.subarray(0, headNeeded(head)), { engine: 'wasm' }); // the engine the decode compiles anyway
}

/** The first bytes of a stream, kept until its first buffer can be checked. */
class Head {
  private parts: Uint8Array[] = [];
  private length = 0;
  private needed = L.WMI_BUFFER_HEADER_SIZE + 8;
  /** adds a chunk; true when enough bytes arrived to check the first buffer */
  add(chunk: Uint8Array): boolean {
    this.parts.push(chunk);
    this.length += chunk.length;
    if (this.length < this.needed) return false;
    this.needed = headNeeded(this.bytes());
    return this.length >= this.needed;
  }
  bytes(): Uint8Array {
    if (this.parts.length > 1) this.parts = [Buffer.concat(this.parts)];
    return this.parts[0] ?? new Uint8Array(0);
  }
}

async function writeAll(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += (await fh.write(bytes, done, bytes.length - done)).bytesWritten;
}

async function spool(stream: Readable, name: string): Promise<Input> {
  // named before it exists, so that a signal at any moment finds it
  const dir = join(tmpdir(), `etw-decode-${process.pid}-${randomBytes(6).toString('hex')}`);
  const forget = atSignal(() => rmSync(dir, { recursive: true, force: true }));
  const dispose = async () => {
    await rm(dir, { recursive: true, force: true });
    forget();
  };
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    forget();
    stream.destroy();
    throw new CliError(`cannot read ${name}: cannot create a temporary directory in ${tmpdir()}: ${errnoText(e)}`);
  }
  const path = join(dir, 'input.etl');
  let fh: FileHandle | null = null;
  try {
    fh = await open(path, 'wx');
    let head: Head | null = new Head();
    const reading = stream[Symbol.asyncIterator]();
    for (;;) {
      let chunk: Uint8Array;
      try {
        const it = await reading.next();
        if (it.done) break;
        chunk = it.value as Uint8Array;
      } catch (e) {
        throw new CliError(`cannot read ${name}: ${errnoText(e)}`);
      }
      try {
        await writeAll(fh, chunk);
      } catch (e) {
        throw new CliError(`cannot read ${name}: cannot copy it to a temporary file in ${tmpdir()}: ${errnoText(e)}`);
      }
      // not an ETL file: say so now, not after the whole stream
      if (head?.add(chunk)) {
        checkHead(head.bytes());
        head = null;
      }
    }
    if (head) checkHead(head.bytes()); // a stream shorter than its first buffer (or empty)
    await fh.close();
    fh = null;
    return { path, name, describe: (m) => m.split(path).join(name), dispose };
  } catch (e) {
    stream.destroy();
    await fh?.close().catch(() => {});
    await dispose();
    throw e;
  }
}

// ---- output

/** Where a command writes its text. */
export interface Output {
  /** text (UTF-8) or bytes; bytes must not change after the call (they may be written later) */
  write(data: string | Uint8Array): Promise<void>;
  /** all written: flush, and for a file make it appear under its name */
  commit(): Promise<void>;
  /** failed: remove what was written under a temporary name */
  abort(): Promise<void>;
}

const CLOSED_CODES = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED']);

/**
 * Standard output. A write error is remembered and thrown by the next write or by commit(): EPIPE (the
 * reader went away) as OutputClosed, anything else (a full disk behind `> file`) as a CliError.
 */
export function stdoutOutput(out: NodeJS.WriteStream = process.stdout): Output {
  let failed: NodeJS.ErrnoException | null = null;
  const fail = (e: Error | null | undefined) => {
    if (e && !failed) failed = e;
  };
  out.on('error', fail);
  /** resolves when the stream errs or closes: no drain and no write callback may come after that */
  const gone = new Promise<void>((resolve) => {
    out.once('error', () => resolve());
    out.once('close', () => resolve());
  });
  const check = () => {
    if (!failed) return;
    if (CLOSED_CODES.has(failed.code ?? '')) throw new OutputClosed();
    throw new CliError(`cannot write standard output: ${errnoText(failed)}`);
  };
  let last: Promise<void> = Promise.resolve();
  return {
    async write(text) {
      check();
      let ok = true;
      last = new Promise<void>((resolve) => {
        ok = out.write(text, (e) => {
          fail(e);
          resolve();
        });
      });
      if (!ok && !out.destroyed) await Promise.race([new Promise<void>((resolve) => out.once('drain', () => resolve())), gone]);
      check();
    },
    async commit() {
      await Promise.race([last, gone]);
      check();
    },
    async abort() {},
  };
}

/**
 * A file named by `-o`. A regular file (new or existing; a symbolic link is followed) is written under a
 * temporary name in the same directory and renamed over the target only when complete, so the target
 * is either the previous file or the whole new output, never a part of it; the temporary file is removed
 * on failure and on SIGHUP/SIGINT/SIGTERM. A device or FIFO is written in place. Fails at once with a
 * CliError when the target cannot be written.
 */
export async function fileOutput(target: string): Promise<Output> {
  const cannot = (e: unknown) => new CliError(`cannot write ${target}: ${errnoText(e)}`);
  let st = null;
  try {
    st = await stat(target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw cannot(e);
  }
  if (st?.isDirectory()) throw new CliError(`cannot write ${target}: it is a directory`);
  const inPlace = st !== null && !st.isFile();
  let real = target;
  if (st !== null && !inPlace) real = await realpath(target).catch(() => target);
  const temp = inPlace ? null : join(dirname(real), `.${basename(real)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  // registered before the file exists, so that a signal at any moment finds it
  const forget = temp ? atSignal(() => rmSync(temp, { force: true })) : () => {};
  let fh: FileHandle;
  try {
    fh = await open(temp ?? target, temp ? 'wx' : 'w');
  } catch (e) {
    forget();
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CliError(`cannot write ${target}: no such directory: ${dirname(target)}`);
    throw cannot(e);
  }
  let isOpen = true;
  const close = async () => {
    if (!isOpen) return;
    isOpen = false;
    await fh.close();
  };
  const abort = async () => {
    await close().catch(() => {});
    if (temp) await unlink(temp).catch(() => {});
    forget();
  };
  try {
    if (temp && st) await fh.chmod(st.mode & 0o7777); // replacing a file keeps its permissions
  } catch {
    // not worth failing for
  }
  return {
    async write(text) {
      try {
        await writeAll(fh, typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
      } catch (e) {
        // `-o /dev/stdout | head`: the reader went away, as on standard output
        if (inPlace && (e as NodeJS.ErrnoException).code === 'EPIPE') throw new OutputClosed();
        throw cannot(e);
      }
    },
    async commit() {
      try {
        if (temp) await fh.datasync(); // the data is on disk before the name points at it
        await close();
        if (temp) await rename(temp, real);
      } catch (e) {
        await abort();
        throw cannot(e);
      }
      forget();
    },
    abort,
  };
}
