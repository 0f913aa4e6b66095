// The command line's paths and pipes: where the input comes from (a file, or a stream spooled to a
// temporary file), where the output goes (standard output, or a file written under a temporary name and
// renamed when complete), and the failures of both as one-line errors with the exit codes of Unix tools.
// An output is never the input; every command ends at once on SIGHUP/SIGINT/SIGTERM, whatever it waits
// on: a FIFO or pipe is read and written through a non-blocking descriptor the event loop polls, never by
// a libuv pool thread that a blocking open() or read() would hold (process.exit waits for those threads).
import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { closeSync, constants as FS, createReadStream, fstatSync, openSync, readFileSync, readlinkSync, rmSync, type Stats } from 'node:fs';
import { open, realpath, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { isatty } from 'node:tty';
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
    case 'EBADF':
      return 'it is closed (bad file descriptor)';
  }
  const message = String(err?.message ?? e);
  // "ENOSPC: no space left on device, write" → "no space left on device"
  return message.replace(/^[A-Z0-9_]+: /, '').replace(/, \w+( '.*')?$/, '');
}

// ---- signals: the command stops at once, temporary files never outlive it

const cleanups = new Set<() => void>();
let signalsHooked = false;
let stopping = false;

function onSignal(signal: keyof typeof EXIT.signal): void {
  if (stopping) return; // a second signal while the first one's cleanup runs
  stopping = true;
  for (const c of cleanups) {
    try {
      c();
    } catch {
      // best effort: the process is going away
    }
  }
  // prompt: process.exit joins libuv's pool threads, and none of them waits on a FIFO, pipe or terminal
  // (streams are polled through non-blocking descriptors, terminals are refused); worker threads are
  // terminated; this handler runs as soon as this thread yields (a decode: after its chunk, milliseconds)
  process.exit(EXIT.signal[signal]);
}

/** SIGHUP/SIGINT/SIGTERM end the command with 128 + the signal after the registered cleanups (idempotent). */
export function exitOnSignals(): void {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const s of ['SIGHUP', 'SIGINT', 'SIGTERM'] as const) process.on(s, () => onSignal(s));
}

/**
 * Registers a synchronous cleanup run when SIGHUP/SIGINT/SIGTERM stop the command (before its exit: a
 * plain process.on(signal) listener added later would never run); returns its removal.
 */
export function atSignal(cleanup: () => void): () => void {
  exitOnSignals();
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

// ---- the command line's I/O options

/** Bytes a stream may put in its spool (--max-spool; the command's own, set before its action runs). */
let maxSpool = Infinity;

/** 65536 → '64 KiB (65536 bytes)', 1000 → '1000 bytes' */
function sizeText(n: number): string {
  for (const [unit, size] of [['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]] as const) {
    if (n >= size && n % size === 0) return `${n / size} ${unit} (${n} bytes)`;
  }
  return `${n} bytes`;
}

/**
 * Sets up the process for the command line: SIGHUP/SIGINT/SIGTERM end every command with 128 + the
 * signal (exitOnSignals), and each command's I/O options (--max-spool) apply to its inputs.
 */
export function prepareCommandLine(program: Command): void {
  exitOnSignals();
  program.hook('preAction', (_program, action) => {
    const limit = action.opts().maxSpool as unknown;
    maxSpool = typeof limit === 'number' ? limit : Infinity;
  });
}

// ---- inputs that outputs must not overwrite

interface InputFile {
  readonly dev: number;
  readonly ino: number;
  /** how messages name the input */
  readonly name: string;
}

/** The regular files behind the open inputs (an argument, or standard input redirected from a file). */
const inputFiles = new Set<InputFile>();

/** The open input that `st` is (same device and inode: any link to it), or null. */
function inputAt(st: Stats): InputFile | null {
  if (!st.isFile()) return null;
  for (const f of inputFiles) if (f.dev === st.dev && f.ino === st.ino) return f;
  return null;
}

/** Keeps `input`'s file (when `st` is a regular file) among those outputs refuse, until it is disposed of. */
function tracked(input: Input, st: Stats | null): Input {
  if (!st?.isFile()) return input;
  const file: InputFile = { dev: st.dev, ino: st.ino, name: input.name };
  inputFiles.add(file);
  return {
    ...input,
    dispose: async () => {
      inputFiles.delete(file);
      await input.dispose();
    },
  };
}

function fstatOrNull(fd: number): Stats | null {
  try {
    return fstatSync(fd);
  } catch {
    return null;
  }
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
 * random, so it is copied to a temporary file (in os.tmpdir(), unlinked as soon as it is opened: nothing
 * is left behind however the command ends; at most --max-spool bytes), checked to start like an ETL file
 * as soon as its first buffer has arrived, and decoded from there. Regular files, missing paths and
 * directories are left to the decoder's own checks (`readTraceInfo`). A terminal is refused.
 */
export async function openInput(arg: string, stdin: NodeJS.ReadStream = process.stdin): Promise<Input> {
  if (arg === '-') {
    if (stdin.isTTY) {
      throw new CliError('standard input is a terminal: pipe a trace into it (… | etw-decode summary -) or name a file', EXIT.usage);
    }
    const st = stdin === process.stdin ? fstatOrNull(0) : null;
    return tracked(await spool(stdin, 'standard input'), st);
  }
  const st = await stat(arg).catch(() => null);
  if (st === null || st.isFile() || st.isDirectory()) {
    return tracked({ path: arg, name: arg, describe: (m) => m, dispose: async () => {} }, st);
  }
  return spool(openStream(arg, st), arg);
}

/**
 * A FIFO is opened without waiting (O_NONBLOCK) and read as a pipe the event loop polls: the command
 * waits for its writer as `cat` does, but in no thread, so a signal ends it at once (on Linux, where a
 * FIFO opened so reads as "no data yet" until a writer comes; elsewhere it is opened as a file is). A
 * terminal is refused (its reads would hold a pool thread); another device is read as a file.
 */
function openStream(path: string, st: Stats): Readable {
  if (!st.isCharacterDevice() && !(st.isFIFO() && process.platform === 'linux')) return createReadStream(path);
  let fd: number;
  try {
    fd = openSync(path, FS.O_RDONLY | FS.O_NONBLOCK | FS.O_NOCTTY);
  } catch (e) {
    throw new CliError(`cannot read ${path}: ${errnoText(e)}`);
  }
  if (st.isFIFO()) return new Socket({ fd, readable: true, writable: false });
  const terminal = isatty(fd);
  closeSync(fd);
  if (terminal) throw new CliError(`${path} is a terminal: pipe a trace into the command (… | etw-decode summary -) or name a file`, EXIT.usage);
  return createReadStream(path);
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

/**
 * A path by which this process (and its worker threads) can open the file behind descriptor `fd` again
 * after the file is unlinked, or null where there is none.
 */
function reopenPath(fd: number): string | null {
  return process.platform === 'linux' ? `/proc/self/fd/${fd}` : null;
}

async function spool(stream: Readable, name: string): Promise<Input> {
  const file = join(tmpdir(), `etw-decode-${process.pid}-${randomBytes(6).toString('hex')}.etl`);
  // named before it exists, so that a signal at any moment finds it
  const forget = atSignal(() => rmSync(file, { force: true }));
  let fh: FileHandle;
  try {
    fh = await open(file, 'wx+', 0o600);
  } catch (e) {
    forget();
    stream.destroy();
    throw new CliError(`cannot read ${name}: cannot create a temporary file in ${tmpdir()}: ${errnoText(e)}`);
  }
  // unlinked at once where the open descriptor can be reopened by path: the copy lives as long as the
  // descriptor, so not even SIGKILL leaves it behind
  const reopen = reopenPath(fh.fd);
  if (reopen !== null) {
    await unlink(file).catch(() => {});
    forget();
  }
  const path = reopen ?? file;
  const dispose = async () => {
    await fh.close().catch(() => {});
    if (reopen === null) await rm(file, { force: true });
    forget();
  };
  try {
    let head: Head | null = new Head();
    let spooled = 0;
    const limit = maxSpool;
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
      // not an ETL file: say so now, not after the whole stream
      if (head?.add(chunk)) {
        checkHead(head.bytes());
        head = null;
      }
      spooled += chunk.length;
      if (spooled > limit) {
        throw new CliError(`${name} is larger than --max-spool ${sizeText(limit)}: a stream is copied to a temporary file before it is decoded; raise --max-spool or decode a file`);
      }
      try {
        await writeAll(fh, chunk);
      } catch (e) {
        throw new CliError(`cannot read ${name}: cannot copy it to a temporary file in ${tmpdir()}: ${errnoText(e)}`);
      }
    }
    if (head) checkHead(head.bytes()); // a stream shorter than its first buffer (or empty)
    return { path, name, describe: (m) => m.split(path).join(name), dispose };
  } catch (e) {
    stream.destroy();
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
 * A stream (standard output, a FIFO) as an Output. A write error is remembered and thrown by the next
 * write or by commit(): EPIPE (the reader went away) as OutputClosed, anything else (a full disk behind
 * `> file`) as a CliError naming `name`. `end`: commit() ends the stream (closing its descriptor).
 */
function streamOutput(out: Writable, name: string, end: boolean): Output {
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
    throw new CliError(`cannot write ${name}: ${errnoText(failed)}`);
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
      if (end && !out.destroyed) await Promise.race([new Promise<void>((resolve) => out.end(() => resolve())), gone]);
      check();
    },
    async abort() {
      if (end) out.destroy();
    },
  };
}

/**
 * Standard output closed by the shell (`>&-`). Node reopens a closed descriptor 0-2 on /dev/null,
 * read-write, before any of our code runs, so writes would vanish without an error; a shell's
 * `> /dev/null` opens it write-only. Recognised on Linux only (/proc/self/fdinfo), where a descriptor a
 * parent set to /dev/null read-write (child_process 'ignore') looks the same and is taken as closed too.
 */
function closedByShell(fd: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    if (readlinkSync(`/proc/self/fd/${fd}`) !== '/dev/null') return false;
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    return flags !== null && (parseInt(flags[1]!, 8) & 3) === FS.O_RDWR; // O_ACCMODE
  } catch {
    return false;
  }
}

/**
 * Standard output. Refused when it is closed (`>&-`, exit 1) or is the input file (`>> trace.etl`, exit
 * 2); a write error is thrown by the next write or by commit() (streamOutput).
 */
export function stdoutOutput(out: NodeJS.WriteStream = process.stdout): Output {
  if (out === process.stdout) {
    if (closedByShell(1)) throw new CliError('cannot write standard output: it is closed (>&-)');
    const st = fstatOrNull(1);
    const input = st && inputAt(st);
    if (input) throw new CliError(`standard output is the input ${input.name}: writing it would destroy the trace; redirect it to another file`, EXIT.usage);
  }
  return streamOutput(out, 'standard output', false);
}

/** Opens a FIFO for writing without a pool thread: polled until a reader comes, as `cat > fifo` waits. */
async function openFifoForWriting(target: string): Promise<Socket> {
  for (;;) {
    try {
      return new Socket({ fd: openSync(target, FS.O_WRONLY | FS.O_NONBLOCK | FS.O_NOCTTY), readable: false, writable: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENXIO') throw new CliError(`cannot write ${target}: ${errnoText(e)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // no reader yet
  }
}

/**
 * A file named by `-o`. A regular file (new or existing; a symbolic link is followed) is written under a
 * temporary name in the same directory and renamed over the target only when complete, so the target
 * is either the previous file or the whole new output, never a part of it; the temporary file is removed
 * on failure and on SIGHUP/SIGINT/SIGTERM. The input file itself (any link to it: same device and inode)
 * is refused (exit 2). A device or FIFO is written in place (a FIFO through a non-blocking descriptor,
 * on Linux). Fails at once with a CliError when the target cannot be written.
 */
/** Writes `bytes` to `target` (a path, or - for standard output) whole: committed, or nothing left behind. */
export async function writeWhole(target: string, bytes: Uint8Array): Promise<void> {
  const out: Output = target === '-' ? stdoutOutput() : await fileOutput(target);
  try {
    await out.write(bytes);
    await out.commit();
  } catch (e) {
    await out.abort();
    throw e;
  }
}

export async function fileOutput(target: string): Promise<Output> {
  const cannot = (e: unknown) => new CliError(`cannot write ${target}: ${errnoText(e)}`);
  let st = null;
  try {
    st = await stat(target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw cannot(e);
  }
  if (st?.isDirectory()) throw new CliError(`cannot write ${target}: it is a directory`);
  const input = st && inputAt(st);
  if (input) throw new CliError(`-o ${target} is the input ${input.name}: writing it would destroy the trace; choose another output file`, EXIT.usage);
  if (st?.isFIFO() && process.platform === 'linux') return streamOutput(await openFifoForWriting(target), target, true);
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
