// A deterministic scheduler simulation: per-CPU running threads that block, are readied by ReadyThread
// events, get preempted, are created and exit, inside processes that start and end; it produces the events of
// an NT-Kernel-Logger trace (rundowns, Thread/Process/SetName/ReadyThread events, CSwitch events or compact
// switches, optionally SpinLock and noise events) for writeTrace() and the ground truth the decoders must
// reproduce from those bytes (docs/format.md part F; issue 9's rules for the threads/processes tables).
//
// Decisions (also in the SimulatedSchedule docs):
// * Every event of the trace gets a distinct timestamp (one global clock, +1 at least per event), so
//   "applied in timestamp order" is unambiguous and per-CPU timestamps strictly increase.
// * A CPU uses one switch encoding for the whole trace ('mixed' = even CPUs CSwitch events, odd CPUs compact
//   switches): a decoder reconstructs a compact switch's new thread from the next compact switch of the same
//   CPU, so mixing encodings on one CPU would make the compact rows disagree with the truth.
// * ReadyThread events are logged only on a CPU that has already switched in this trace, and on every CPU the
//   last ReadyThread precedes the last switch, so the readying thread is always "newThreadId of the latest
//   switch on that CPU at or before the ready" for CSwitch and compact CPUs alike (the last compact switch of a
//   CPU decodes with newThreadId null; nothing depends on it).
// * Header ids of SYSTEM headers: Thread/Process Start carry the creating thread (as real files do), End the
//   exiting thread itself (as real files do), DCStart/DCEnd the System thread that logs the rundown (real
//   18362 files carry the thread itself; the simulation uses a different thread so that decoders taking ids
//   from the header fail).
// * New threads are made ready by a ReadyThread (AdjustReason None) logged by their creator, after the Start.
// Browser-safe: no node imports.
import * as L from '../generated/layout.js';
import { compactTickLimit } from './compact.js';
import { bytesToGuid, HEADER_KINDS } from './events.js';
import { KINDS_32, KINDS_64, noiseEvent } from './generate.js';
import { DEFAULT_GROUP_MASK1, normalizeOptions, timestampToFiletime } from './logfile.js';
import type { NormalizedOptions } from './logfile.js';
import { Rng } from './random.js';
import * as F from './sched-layout.js';
import type {
  CompactSwitchSpec,
  CSwitchSpec,
  EventSpec,
  IdentityHeaderKind,
  ImageOpcode,
  ProcessOpcode,
  ProcessSpec,
  ThreadOpcode,
  ThreadSpec,
  TraceDescription,
  TraceOptions,
} from './types.js';

// ---------------------------------------------------------------------------------------------
// public types

/** How a CPU's context switches are logged: CSwitch (0x0524) events or compact (0x0525) batches. */
export type SwitchEncoding = 'cswitch' | 'compact';
/** 'mixed': even CPUs CSwitch events, odd CPUs compact switches. */
export type SwitchMode = SwitchEncoding | 'mixed';

export interface ScheduleOptions extends Omit<TraceOptions, 'numberOfProcessors'> {
  seed: number;
  /** processors, default 4 (1…64) */
  cpus?: number;
  /** length of the scheduling phase in session clock ticks, default 5_000_000 (0.5 s at 10 MHz QPC); the
   *  simulation runs on past it until the scripted lifecycle events have happened */
  duration?: number;
  /** processes alive at the start, Idle and System included; default 8, at least 5 (Idle, System, Registry and two that the scripted lifecycle needs) */
  processes?: number;
  /** non-idle threads alive at the start; default 40, at least max(cpus + 2, processes + 3) */
  threads?: number;
  /** default 'mixed'; or one encoding per CPU */
  switchMode?: SwitchMode | SwitchEncoding[];
  /** CSwitch event versions, each event picks one; default [4] */
  cswitchVersions?: (2 | 3 | 4)[];
  /** Thread event version, default 3 (v3: names in DCStart/DCEnd/End, none in Start, as on 18362) */
  threadVersion?: 2 | 3 | 4;
  /** Process event version, default 4; Defunct uses 5 when this is 4 (as on 18362) */
  processVersion?: 2 | 3 | 4 | 5;
  /** probability per scheduler step of a SpinLock event on a busy CPU, default 0 */
  spinlocks?: number;
  /** probability per scheduler step of a noise event of a random header kind, default 0 */
  noise?: number;
  /** header class of each part F event group (the 32/64 form follows pointerSize). Defaults as in Win10
   *  files (F.1): thread SYSTEM, processStartEnd SYSTEM, processRundown (DCStart/DCEnd/Defunct) PERFINFO,
   *  readyThread PERFINFO, setThreadName PERFINFO, imageLoadUnload SYSTEM, imageRundown PERFINFO.
   *  { processRundown: 'SYSTEM' } gives Win7's form */
  headers?: Partial<Record<IdentityEventGroup, 'SYSTEM' | 'PERFINFO'>>;
  /** SampledProfile events (G.1): one per CPU every `profileInterval` session clock ticks, for the thread
   *  running there (0 = idle); default 0, none. They draw no random number */
  profileInterval?: number;
  /** Image events (G.2): DCStart/DCEnd of each process's image (and ntdll.dll in user processes) in the
   *  rundowns, a Load after a Process Start and an Unload before a Process End; default false. They draw
   *  no random number */
  images?: boolean;
  /** Image event version, default 3 */
  imageVersion?: 2 | 3;
  /** Stacks (H.1) after every CSwitch event (the stack of the thread switched in), ReadyThread (the readying
   *  thread's) and SampledProfile (the sampled thread's), on the event's CPU: a kernel half and, for a thread of
   *  a user process, a user half. CSwitch and ReadyThread stacks are StackWalk events; sample stacks use stack
   *  caching (StackKeyKernel/StackKeyUser references; each key defined by a KeyDelete when the key is reused
   *  for another stack and by a KeyRundown at the end). Default false. They draw no random number */
  stacks?: boolean;
}

/** The stack of one stacked event (stacks): its halves joined, kernel frames first. */
export interface StackTruth {
  /** the event the stack belongs to (its EventTimeStamp) */
  eventTimestamp: bigint;
  table: 'cswitch' | 'readythread' | 'samples';
  /** StackThread / StackProcess */
  threadId: number;
  processId: number;
  kernelFrames: bigint[];
  userFrames: bigint[];
}

/** Groups of part F events whose header class simulateSchedule can choose. */
export type IdentityEventGroup =
  | 'thread'
  | 'processStartEnd'
  | 'processRundown'
  | 'readyThread'
  | 'setThreadName'
  | 'sampledProfile'
  | 'imageLoadUnload'
  | 'imageRundown';

const DEFAULT_HEADERS: Readonly<Record<IdentityEventGroup, 'SYSTEM' | 'PERFINFO'>> = {
  thread: 'SYSTEM',
  processStartEnd: 'SYSTEM',
  processRundown: 'PERFINFO',
  readyThread: 'PERFINFO',
  setThreadName: 'PERFINFO',
  sampledProfile: 'PERFINFO',
  imageLoadUnload: 'SYSTEM',
  imageRundown: 'PERFINFO',
};

/** One thread lifetime, as the `threads` table must show it. */
export interface ThreadTruth {
  threadId: number;
  processId: number;
  /** timestamp of its Start event; null when first seen in a DCStart */
  startTime: bigint | null;
  /** timestamp of its End event; null if none (DCEnd does not end a lifetime) */
  endTime: bigint | null;
  /** the last non-empty name carried by an event of this lifetime (v3/v4 Thread events, SetName); else null */
  name: string | null;
}

/** One process lifetime, as the `processes` table must show it. */
export interface ProcessTruth {
  processId: number;
  parentId: number;
  sessionId: number;
  imageFileName: string;
  /** every supported Process version (2–5) has a command line; '' for Idle, System and Registry as in real files */
  commandLine: string | null;
  startTime: bigint | null;
  endTime: bigint | null;
  /** from the End event only (i32); null without one */
  exitStatus: number | null;
}

/** One context switch, with the values its encoding carries (null where the encoding has none). */
export interface SwitchTruth {
  cpu: number;
  timestamp: bigint;
  oldThreadId: number;
  /** the true new thread. A decoder knows it from the next compact switch of the CPU, so for the last
   *  compact switch of each CPU it decodes null */
  newThreadId: number;
  /** compact idle packets (old thread 0): null */
  oldThreadPriority: number | null;
  /** compact idle packets: null */
  oldThreadState: number | null;
  /** CSwitch: the byte as written (any state); compact: the wait reason when the state is Waiting (5), else null */
  oldThreadWaitReason: number | null;
  /** CSwitch only; compact: null */
  newThreadPriority: number | null;
  encoding: SwitchEncoding;
}

/** One ReadyThread event. */
export interface ReadyTruth {
  timestamp: bigint;
  cpu: number;
  /** the thread made ready */
  threadId: number;
  /** the thread running on `cpu` at `timestamp` (0 = idle, a DPC) */
  readyingThreadId: number;
  adjustReason: number;
  adjustIncrement: number;
  flags: number;
}

/** One SampledProfile event. */
export interface SampleTruth {
  timestamp: bigint;
  cpu: number;
  /** the thread running on `cpu` at `timestamp` (0 = idle) */
  threadId: number;
  /** its process (0 for the idle thread) */
  processId: number;
  instructionPointer: bigint;
  /** Flags byte: the running thread's priority << 3 (the idle thread: 16 << 3, as in real files) */
  flags: number;
}

/** One image event. */
export interface ImageTruth {
  timestamp: bigint;
  opcode: ImageOpcode;
  processId: number;
  imageBase: bigint;
  imageSize: bigint;
  imageChecksum: number;
  timeDateStamp: number;
  fileName: string;
}

export interface SimulatedSchedule {
  /** the trace: session options + events in timestamp order, for writeTrace() */
  description: TraceDescription;
  /** one row per thread lifetime, in the order of each lifetime's first event */
  threads: ThreadTruth[];
  /** one row per process lifetime, in the order of each lifetime's first event */
  processes: ProcessTruth[];
  /** every context switch, sorted by (cpu, timestamp) */
  switches: SwitchTruth[];
  /** every ReadyThread event, in timestamp order */
  readies: ReadyTruth[];
  /** every SampledProfile event, in timestamp order (none without profileInterval) */
  samples: SampleTruth[];
  /** every image event, in timestamp order (none without images) */
  images: ImageTruth[];
  /** every stacked event, in timestamp order (none without stacks) */
  stacks: StackTruth[];
  /** the sample-interval rundowns (G.4: DCStart and DCEnd, newInterval = profileInterval, in 100 ns units at the default 10 MHz clock; none without profileInterval) */
  sampleIntervals: { timestamp: bigint; opcode: 'dcStart' | 'dcEnd'; newInterval: number }[];
  /** the switch encoding of each CPU */
  cpuEncodings: SwitchEncoding[];
  /** thread ids with more than one lifetime / process ids with more than one lifetime */
  reusedThreadIds: number[];
  reusedProcessIds: number[];
}

// ---------------------------------------------------------------------------------------------
// simulated world

type ThreadState = 'new' | 'ready' | 'running' | 'waiting' | 'dead';

interface SimProcess {
  pid: number;
  parentId: number;
  sessionId: number;
  image: string;
  cmd: string;
  sid: string;
  key: bigint;
  dtb: bigint;
  flags: number;
  packageFullName: string;
  applicationId: string;
  /** threads alive (not yet ended) */
  live: SimThread[];
  terminating: boolean;
  ended: boolean;
  exitStatus: number;
  kernel: boolean;
  truth: ProcessTruth;
}

interface SimThread {
  tid: number;
  proc: SimProcess;
  base: number;
  prio: number;
  state: ThreadState;
  cpu: number;
  readySince: number;
  /** last switch-out (or the trace start) */
  lastOut: number;
  ideal: number;
  name: string;
  mustExit: boolean;
  stackBase: bigint;
  stackLimit: bigint;
  userStackBase: bigint;
  userStackLimit: bigint;
  affinity: bigint;
  win32StartAddr: bigint;
  tebBase: bigint;
  truth: ThreadTruth;
}

interface CpuState {
  cur: SimThread | null;
  next: number;
  /** time of the CPU's next SampledProfile (profileInterval) */
  nextSample: number;
  switched: boolean;
  preempt: boolean;
  lastSwitch: number;
  lastReady: number;
  encoding: SwitchEncoding;
}

export interface ProcessTemplate {
  image: string;
  cmd: string;
  sid: string;
  session: number;
  names?: string[];
  packageFullName?: string;
  applicationId?: string;
  flags?: number;
}

export const USER_SID = 'S-1-5-21-4150174568-1238771585-1724997581-1001';

export const TEMPLATES: readonly ProcessTemplate[] = [
  { image: 'Registry', cmd: '', sid: 'S-1-5-18', session: F.SESSION_ID_NONE },
  { image: 'smss.exe', cmd: '\\SystemRoot\\System32\\smss.exe', sid: 'S-1-5-18', session: F.SESSION_ID_NONE },
  {
    image: 'csrss.exe', sid: 'S-1-5-18', session: 0,
    cmd: '%SystemRoot%\\system32\\csrss.exe ObjectDirectory=\\Windows SharedSection=1024,20480,768 Windows=On SubSystemType=Windows ServerDll=basesrv,1 ServerDll=winsrv:UserServerDllInitialization,3 ServerDll=sxssrv,4 ProfileControl=Off MaxRequestThreads=16',
  },
  { image: 'svchost.exe', cmd: 'C:\\Windows\\system32\\svchost.exe -k DcomLaunch -p', sid: 'S-1-5-18', session: 0, names: ['ThreadPoolWorker'] },
  { image: 'explorer.exe', cmd: 'C:\\Windows\\Explorer.EXE', sid: USER_SID, session: 1, names: ['ShellTaskScheduler', 'CoreMessaging', 'ThreadPoolWorker'] },
  {
    image: 'chrome.exe', cmd: '"C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe" ', sid: USER_SID, session: 1,
    names: ['CrBrowserMain', 'Chrome_IOThread', 'ThreadPoolForegroundWorker', 'ThreadPoolBackgroundWorker', 'Chrome_ChildIOThread'],
  },
  { image: 'svchost.exe', cmd: 'C:\\Windows\\System32\\svchost.exe -k LocalServiceNetworkRestricted -p', sid: 'S-1-5-19', session: 0 },
  {
    image: 'chrome.exe', sid: USER_SID, session: 1, names: ['CrRendererMain', 'Compositor', 'ThreadPoolForegroundWorker'],
    cmd: '"C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe" --type=renderer --lang=en-US --renderer-client-id=7 --mojo-platform-channel-handle=3120 /prefetch:1',
  },
  { image: 'dwm.exe', cmd: '"dwm.exe"', sid: 'S-1-5-90-0-1', session: 1, names: ['CompositorThread'] },
  {
    image: 'Code.exe', cmd: '"C:\\Users\\dev\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe" ', sid: USER_SID, session: 1,
    names: ['CrBrowserMain', 'Chrome_IOThread'],
  },
  { image: 'RuntimeBroker.exe', cmd: 'C:\\Windows\\System32\\RuntimeBroker.exe -Embedding', sid: USER_SID, session: 1 },
  {
    image: 'SearchHost.exe', sid: USER_SID, session: 1,
    cmd: '"C:\\Windows\\SystemApps\\MicrosoftWindows.Client.CBS_cw5n1h2txyewy\\SearchHost.exe" -ServerName:CortanaUI.AppX8z9r6jm96hw4bsbneegw0kyxx296wr9t.mca',
    packageFullName: 'MicrosoftWindows.Client.CBS_1000.22700.1027.0_x64__cw5n1h2txyewy', applicationId: 'CortanaUI',
    flags: F.PROCESS_FLAG_APPLICATION_ID | F.PROCESS_FLAG_PACKAGED,
  },
  { image: 'conhost.exe', cmd: '\\??\\C:\\Windows\\system32\\conhost.exe 0x4', sid: USER_SID, session: 1 },
  { image: 'msedge.exe', cmd: '"C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe" --no-startup-window', sid: USER_SID, session: 1, names: ['CrBrowserMain'] },
];

const NEW_PROCESS: ProcessTemplate = {
  image: 'notepad.exe', cmd: '"C:\\Windows\\system32\\notepad.exe" C:\\Users\\dev\\notes.txt', sid: USER_SID, session: 1,
};
const REUSED_PID_PROCESS: ProcessTemplate = {
  image: 'SearchProtocolHost.exe', sid: 'S-1-5-18', session: 0,
  cmd: '"C:\\Windows\\system32\\SearchProtocolHost.exe" Global\\UsGthrFltPipeMssGthrPipe7_ Global\\UsGthrCtrlFltPipeMssGthrPipe7 1 -2147483646 "Software\\Microsoft\\Windows Search" "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT; MS Search 4.0 Robot)" "C:\\ProgramData\\Microsoft\\Search\\Data\\Temp\\usgthrsvc" "DownLevelDaemon" ',
};

export const USER_BASE_PRIORITIES = [8, 8, 8, 8, 8, 8, 9, 10, 10, 6, 4, 13, 12, 15];
export const SYSTEM_BASE_PRIORITIES = [8, 12, 13, 13, 13, 15, 16, 18, 23];
/** wait reasons of blocking switch-outs (Executive, DelayExecution, UserRequest, WrUserRequest, WrQueue, …) */
export const WAIT_REASONS = [0, 4, 6, 6, 6, 13, 13, 15, 15, 15, 11, 7, 16, 17, 28, 29, 34, 37, 37];
export const USER_MODE_WAITS = new Set([6, 13, 15, 37]);
export const GENERIC_NAMES = ['ThreadPoolWorker', 'RPC worker', 'WinRT Worker', 'GdiPlus', 'CoreMessaging'];
const KTHREAD_TERMINATED = 4;
const KTHREAD_READY = 1;
const KTHREAD_RUNNING = 2;
const KTHREAD_DEFERRED_READY = 7;
const WR_TERMINATED = 22;
const WR_QUANTUM_END = 30;
const WR_PREEMPTED = 32;
const WR_YIELD_EXECUTION = 33;
/** Masks[0] EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD; Masks[1] + PERF_DISPATCHER (A.9) */
export const GROUP_MASK0 = 0x00000003;
export const PERF_DISPATCHER_MASK1 = 0x00000200;
export const PERF_LOADER_MASK0 = 0x00000004;
export const PERF_PROFILE_MASK1 = 0x00000002;

// ---------------------------------------------------------------------------------------------

interface Normalized {
  seed: number;
  cpus: number;
  duration: number;
  processes: number;
  threads: number;
  encodings: SwitchEncoding[];
  cswitchVersions: (2 | 3 | 4)[];
  threadVersion: 2 | 3 | 4;
  processVersion: 2 | 3 | 4 | 5;
  spinlocks: number;
  noise: number;
  headers: Record<IdentityEventGroup, 'SYSTEM' | 'PERFINFO'>;
  profileInterval: number;
  images: boolean;
  imageVersion: 2 | 3;
  stacks: boolean;
  trace: TraceOptions;
}

function normalize(o: ScheduleOptions): Normalized {
  if (o === null || typeof o !== 'object') throw new RangeError('options: must be an object');
  if (!Number.isFinite(o.seed)) throw new RangeError(`seed: ${String(o.seed)} is not a finite number`);
  const int = (v: unknown, lo: number, hi: number, name: string, d: number): number => {
    if (v === undefined) return d;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${name}: ${String(v)} is not an integer in [${lo}, ${hi}]`);
    return v;
  };
  const cpus = int(o.cpus, 1, 64, 'cpus', 4);
  const duration = int(o.duration, 10_000, 2 ** 40, 'duration', 5_000_000);
  const processes = int(o.processes, 5, 1000, 'processes', 8);
  const minThreads = Math.max(cpus + 2, processes + 3);
  const threads = int(o.threads, minThreads, 100_000, 'threads', Math.max(40, minThreads));
  let encodings: SwitchEncoding[];
  const mode = o.switchMode ?? 'mixed';
  if (Array.isArray(mode)) {
    if (mode.length !== cpus || mode.some((m) => m !== 'cswitch' && m !== 'compact')) {
      throw new RangeError(`switchMode: an array must hold one of 'cswitch' | 'compact' per CPU (${cpus})`);
    }
    encodings = mode.slice();
  } else if (mode === 'cswitch' || mode === 'compact') {
    encodings = Array.from({ length: cpus }, () => mode);
  } else if (mode === 'mixed') {
    encodings = Array.from({ length: cpus }, (_, c) => (c % 2 === 0 ? 'cswitch' : 'compact'));
  } else {
    throw new RangeError(`switchMode: ${String(mode)} is not 'cswitch', 'compact', 'mixed' or an array`);
  }
  const cswitchVersions = o.cswitchVersions ?? [4];
  if (!Array.isArray(cswitchVersions) || cswitchVersions.length === 0 || cswitchVersions.some((v) => v !== 2 && v !== 3 && v !== 4)) {
    throw new RangeError('cswitchVersions: must be a non-empty array of 2, 3, 4');
  }
  const threadVersion = int(o.threadVersion, 2, 4, 'threadVersion', 3) as 2 | 3 | 4;
  const processVersion = int(o.processVersion, 2, 5, 'processVersion', 4) as 2 | 3 | 4 | 5;
  const profileInterval = int(o.profileInterval, 0, 2 ** 40, 'profileInterval', 0);
  const imageVersion = int(o.imageVersion, 2, 3, 'imageVersion', 3) as 2 | 3;
  if (o.images !== undefined && typeof o.images !== 'boolean') throw new RangeError(`images: ${String(o.images)} is not a boolean`);
  if (o.stacks !== undefined && typeof o.stacks !== 'boolean') throw new RangeError(`stacks: ${String(o.stacks)} is not a boolean`);
  const prob = (v: unknown, name: string): number => {
    if (v === undefined) return 0;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new RangeError(`${name}: ${String(v)} is not a probability in [0, 1]`);
    return v;
  };
  const headers = { ...DEFAULT_HEADERS };
  if (o.headers !== undefined) {
    if (o.headers === null || typeof o.headers !== 'object') throw new RangeError('headers: must be an object');
    for (const [k, v] of Object.entries(o.headers)) {
      if (!(k in DEFAULT_HEADERS)) throw new RangeError(`headers.${k}: not one of ${Object.keys(DEFAULT_HEADERS).join(', ')}`);
      if (v !== 'SYSTEM' && v !== 'PERFINFO') throw new RangeError(`headers.${k}: ${String(v)} is not 'SYSTEM' or 'PERFINFO'`);
      headers[k as IdentityEventGroup] = v;
    }
  }
  const rest: Record<string, unknown> = { ...o };
  for (const k of ['seed', 'cpus', 'duration', 'processes', 'threads', 'switchMode', 'cswitchVersions', 'threadVersion', 'processVersion', 'spinlocks', 'noise', 'headers', 'profileInterval', 'images', 'imageVersion', 'stacks']) {
    delete rest[k];
  }
  const trace = rest as TraceOptions;
  trace.numberOfProcessors = cpus;
  if (trace.groupMasks === undefined) {
    // PERF_LOADER (Masks[0] 0x4) with images, PERF_PROFILE (Masks[1] 0x2) with samples (docs/format.md §G)
    const mask0 = GROUP_MASK0 | (o.images ? PERF_LOADER_MASK0 : 0);
    const mask1 = DEFAULT_GROUP_MASK1 | PERF_DISPATCHER_MASK1 | (profileInterval > 0 ? PERF_PROFILE_MASK1 : 0);
    trace.groupMasks = [mask0, mask1, 0, 0, 0, 0, 0, 0];
  }
  return {
    seed: o.seed, cpus, duration, processes, threads, encodings, cswitchVersions: cswitchVersions.slice(), threadVersion, processVersion,
    spinlocks: prob(o.spinlocks, 'spinlocks'), noise: prob(o.noise, 'noise'), headers, profileInterval,
    images: o.images ?? false, imageVersion, stacks: o.stacks ?? false, trace,
  };
}


/** A readied thread's priority adjustment (KeReadyThread: unwait boost, boost, or back to base), the caller's. */
export interface ReadyAdjust {
  reason: number;
  inc: number;
}
const ADJUST: ReadyAdjust = { reason: 0, inc: 0 };

/**
 * The adjustment of a waiting thread `w` readied (none for a new thread or a real-time priority), drawn from
 * `rng`: sets w.prio and `out` (the ReadyThread event's AdjustReason and AdjustIncrement).
 */
export function readyAdjust(rng: Rng, w: { base: number; prio: number }, isNew: boolean, out: ReadyAdjust): void {
  out.reason = F.ADJUST_REASON_NONE;
  out.inc = 0;
  if (isNew || w.base >= 16) return;
  const r = rng.next() % 10;
  if (r < 7) {
    out.reason = F.ADJUST_REASON_UNWAIT;
    out.inc = rng.int(1, 2);
    w.prio = Math.min(15, w.base + out.inc);
  } else if (r < 8) {
    out.reason = F.ADJUST_REASON_BOOST;
    out.inc = rng.int(1, 3);
    w.prio = Math.min(15, Math.max(w.prio, w.base + out.inc));
  } else {
    w.prio = w.base;
  }
}

/** The ReadyThread event's Flags, drawn from `rng`: from a DPC when no thread runs on the CPU. */
export function readyFlags(rng: Rng, running: boolean): number {
  let flags = 0;
  if (!running) flags |= F.READY_FLAG_EXECUTING_DPC;
  else if (rng.chance(0.1)) flags |= F.READY_FLAG_DIRECT_SWITCH_ATTEMPT;
  if (rng.chance(0.03)) flags |= F.READY_FLAG_KERNEL_STACK_NOT_RESIDENT;
  return flags;
}

class Simulation {
  private readonly rng: Rng;
  private readonly o: Normalized;
  private readonly ptr: 4 | 8;
  private readonly bias: number;
  /** clock-interrupt tick in session clock units (NewThreadWaitTime unit) */
  private readonly tick: number;
  private readonly session: NormalizedOptions;
  private readonly events: EventSpec[] = [];
  private last: number;
  private readonly t0: number;
  private readonly cpus: CpuState[] = [];
  private readonly procs: SimProcess[] = [];
  private readonly liveProcs = new Map<number, SimProcess>();
  private readonly liveThreads = new Map<number, SimThread>();
  private readonly usedTids = new Set<number>();
  private readonly usedPids = new Set<number>();
  private readonly readyQueue: SimThread[] = [];
  readonly threadRows: ThreadTruth[] = [];
  readonly processRows: ProcessTruth[] = [];
  readonly switches: SwitchTruth[] = [];
  readonly readies: ReadyTruth[] = [];
  readonly samples: SampleTruth[] = [];
  readonly images: ImageTruth[] = [];
  readonly stacks: StackTruth[] = [];
  /** stack caching of the sample stacks: the key of each distinct half (by its frames) and the half of each key */
  private readonly keyOfHalf = new Map<string, bigint>();
  private readonly halfOfKey = new Map<bigint, { frames: bigint[]; kernel: boolean }>();
  readonly sampleIntervals: SimulatedSchedule['sampleIntervals'] = [];
  private idle!: SimProcess;
  private system!: SimProcess;
  private rundownThread!: SimThread;
  private readonly providers: string[] = [];
  // scripted lifecycle
  private readonly script = {
    newProcess: null as SimProcess | null,
    grown: 0,
    victim: null as SimThread | null,
    victimDone: false,
    doomed: null as SimProcess | null,
    doomedEndTs: -1,
    defunct: false,
    tidReused: false,
    pidReused: false,
    renamed: false,
    emptyName: false,
    namedNew: false,
    setNames: 0,
  };
  readonly reusedThreadIds: number[] = [];
  readonly reusedProcessIds: number[] = [];

  constructor(o: Normalized) {
    this.o = o;
    this.rng = new Rng(o.seed);
    const n = normalizeOptions(o.trace);
    this.session = n;
    this.ptr = n.pointerSize;
    this.bias = n.bias;
    this.tick = Math.max(1, Number(compactTickLimit(n.clockType, n.timerResolution, n.perfFreq, n.cpuSpeedInMHz) / BigInt(L.CCS_BATCH_TICK_LIMIT)));
    this.t0 = Number(n.headerTimestamp) + 1000;
    this.last = this.t0;
    for (let c = 0; c < o.cpus; c++) {
      this.cpus.push({ cur: null, next: 0, nextSample: 0, switched: false, preempt: false, lastSwitch: -1, lastReady: -1, encoding: o.encodings[c]! });
    }
    for (let i = 0; i < 6; i++) this.providers.push(bytesToGuid(this.rng.bytes(16)));
  }

  // ---- helpers

  private stamp(t: number): bigint {
    const ts = t > this.last ? t : this.last + 1;
    this.last = ts;
    return BigInt(ts);
  }

  private kernelAddr(): bigint {
    if (this.ptr === 8) return 0xfffff80000000000n + BigInt(this.rng.int(0, 0x7ffffff)) * 0x1000n;
    return 0x80000000n + BigInt(this.rng.int(0, 0x3ffff)) * 0x1000n;
  }

  private userAddr(): bigint {
    if (this.ptr === 8) return 0x7ff000000000n + BigInt(this.rng.int(0, 0xffffff)) * 0x10n;
    return 0x10000000n + BigInt(this.rng.int(0, 0x3fffff)) * 0x10n;
  }

  private freshId(used: Set<number>, lo: number, hi: number): number {
    let id: number;
    do id = this.rng.int(lo, hi) * 4;
    while (used.has(id));
    used.add(id);
    return id;
  }

  /** the header kind of a part F event group */
  private header(group: IdentityEventGroup): IdentityHeaderKind {
    return `${this.o.headers[group]}${this.ptr === 8 ? '64' : '32'}` as IdentityHeaderKind;
  }

  private get pointerHeader(): { system: IdentityHeaderKind; perfinfo: IdentityHeaderKind } {
    return this.ptr === 8 ? { system: 'SYSTEM64', perfinfo: 'PERFINFO64' } : { system: 'SYSTEM32', perfinfo: 'PERFINFO32' };
  }

  // ---- world construction

  private newProcess(pid: number, parentId: number, tpl: ProcessTemplate, kernel: boolean, startTs: bigint | null): SimProcess {
    const p: SimProcess = {
      pid, parentId, sessionId: tpl.session, image: tpl.image, cmd: tpl.cmd, sid: tpl.sid, key: this.kernelAddr(),
      dtb: BigInt(this.rng.int(0x100, 0xfffff)) * 0x1000n, flags: tpl.flags ?? 0,
      packageFullName: tpl.packageFullName ?? '', applicationId: tpl.applicationId ?? '', live: [], terminating: false,
      ended: false, exitStatus: F.STATUS_STILL_ACTIVE, kernel,
      truth: { processId: pid, parentId, sessionId: tpl.session, imageFileName: tpl.image, commandLine: tpl.cmd, startTime: startTs, endTime: null, exitStatus: null },
    };
    this.procs.push(p);
    this.liveProcs.set(pid, p);
    return p;
  }

  private newThread(tid: number, proc: SimProcess, base: number, name: string): SimThread {
    const kernel = proc.kernel;
    const stackBase = this.kernelAddr() + 0x6000n;
    const user = !kernel;
    const t: SimThread = {
      tid, proc, base, prio: base, state: 'new', cpu: -1, readySince: 0, lastOut: this.t0, ideal: this.rng.int(0, this.o.cpus - 1),
      name, mustExit: false, stackBase, stackLimit: stackBase - 0x6000n,
      userStackBase: user ? this.userAddr() & ~0xfffn : 0n, userStackLimit: 0n, affinity: (1n << BigInt(this.o.cpus)) - 1n,
      win32StartAddr: user ? this.userAddr() : this.kernelAddr(), tebBase: user ? this.userAddr() & ~0xfffn : 0n,
      truth: { threadId: tid, processId: proc.pid, startTime: null, endTime: null, name: null },
    };
    if (user) t.userStackLimit = t.userStackBase - 0x3000n;
    proc.live.push(t);
    this.liveThreads.set(tid, t);
    return t;
  }

  private buildWorld(): void {
    const o = this.o;
    const rng = this.rng;
    this.usedPids.add(0);
    this.usedPids.add(4);
    this.idle = this.newProcess(0, 0, { image: 'Idle', cmd: '', sid: 'S-1-5-18', session: F.SESSION_ID_NONE }, true, null);
    this.idle.exitStatus = 0; // the Idle rundown payload of real files has ExitStatus 0
    this.system = this.newProcess(4, 0, { image: 'System', cmd: '', sid: 'S-1-5-18', session: F.SESSION_ID_NONE }, true, null);
    const users: SimProcess[] = [];
    for (let i = 0; i < o.processes - 2; i++) {
      const tpl = TEMPLATES[i % TEMPLATES.length]!;
      const parent = i === 0 ? 4 : users.length > 0 ? rng.pick(users).pid : 4;
      const kernel = tpl.image === 'Registry';
      users.push(this.newProcess(this.freshId(this.usedPids, 0x10, 0x1fff), kernel ? 4 : parent, tpl, kernel, null));
    }
    // threads: System gets ~20%, every other process one, the rest spread (the first user process at least 3)
    const nSystem = Math.max(2, Math.round(o.threads * 0.2));
    const counts = users.map(() => 1);
    let rest = o.threads - nSystem - users.length;
    const rich = users.findIndex((p) => !p.kernel);
    for (let k = 0; k < 2 && rest > 0; k++, rest--) counts[rich]!++;
    const spread = users.map((p, i) => (p.kernel ? -1 : i)).filter((i) => i >= 0);
    while (rest-- > 0) counts[rng.pick(spread)]!++;
    for (let i = 0; i < nSystem; i++) this.newThread(this.freshId(this.usedTids, 2, 0xff), this.system, rng.pick(SYSTEM_BASE_PRIORITIES), '');
    users.forEach((p, i) => {
      const tpl = TEMPLATES[i % TEMPLATES.length]!;
      for (let k = 0; k < counts[i]!; k++) {
        let name = '';
        if (tpl.names && k < tpl.names.length) name = tpl.names[k]!;
        else if (rng.chance(0.25)) name = rng.pick(GENERIC_NAMES);
        this.newThread(this.freshId(this.usedTids, 0x40, 0x3fff), p, rng.pick(USER_BASE_PRIORITIES), name);
      }
    });
    this.rundownThread = this.system.live[0]!;
    // initial states: one thread running per CPU, the others waiting (70%) or ready
    const all = [...this.liveThreads.values()];
    for (let i = all.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    all.forEach((t, i) => {
      if (i < o.cpus) {
        t.state = 'running';
        t.cpu = i;
        this.cpus[i]!.cur = t;
      } else if (rng.chance(0.7)) {
        t.state = 'waiting';
      } else {
        t.state = 'ready';
        t.readySince = this.t0;
        this.readyQueue.push(t);
      }
    });
    // the scripted victims: a process that will exit and a thread (of another process) that will exit alone
    const candidates = users.filter((p) => !p.kernel);
    const withTwo = candidates.filter((p) => p.live.length >= 2);
    const victimProc = withTwo.length > 0 ? rng.pick(withTwo) : candidates[0]!;
    const doomedChoices = candidates.filter((p) => p !== victimProc);
    this.script.doomed = doomedChoices.length > 0 ? rng.pick(doomedChoices) : null;
    this.script.victim = rng.pick(victimProc.live);
    if (!this.script.doomed) throw new RangeError('processes: too few user processes for the scripted lifecycle');
    if (victimProc.live.length < 2) throw new RangeError('threads: too few threads for the scripted lifecycle');
  }

  // ---- event builders

  private threadEvent(opcode: ThreadOpcode, t: SimThread, cpu: number, ts: bigint, header: { tid: number; pid: number }): void {
    const v = this.o.threadVersion;
    const withName = v === 4 || (v === 3 && opcode !== 'start');
    const e: ThreadSpec = {
      kind: 'thread', cpu, timestamp: ts, opcode, version: v, header: this.header('thread'),
      headerThreadId: header.tid, headerProcessId: header.pid, processId: t.proc.pid, threadId: t.tid,
      stackBase: t.stackBase, stackLimit: t.stackLimit, userStackBase: t.userStackBase, userStackLimit: t.userStackLimit,
      win32StartAddr: t.win32StartAddr, tebBase: t.tebBase, subProcessTag: 0, basePriority: t.base, pagePriority: 5,
      ioPriority: 2, threadFlags: 0,
    };
    if (v === 2) e.startAddr = t.win32StartAddr;
    else e.affinity = t.affinity;
    if (withName) {
      e.name = opcode === 'start' ? '' : t.name;
      if (e.name !== '') t.truth.name = e.name;
    }
    this.events.push(e);
  }

  private idleThreadEvent(opcode: ThreadOpcode, cpu: number, ts: bigint, logCpu: number): void {
    const v = this.o.threadVersion;
    const stack = (this.ptr === 8 ? 0xfffff80245060000n : 0x82460000n) + BigInt(cpu) * 0x10000n;
    const e: ThreadSpec = {
      kind: 'thread', cpu: logCpu, timestamp: ts, opcode, version: v, header: this.header('thread'),
      headerThreadId: 0, headerProcessId: 0, processId: 0, threadId: 0, stackBase: stack + 0x6000n, stackLimit: stack,
      win32StartAddr: this.ptr === 8 ? 0xfffff8024266ffd0n : 0x8266ffd0n, basePriority: 0, pagePriority: 5, ioPriority: 0,
    };
    if (v === 2) e.startAddr = e.win32StartAddr;
    else e.affinity = 1n << BigInt(cpu);
    if (v === 4 || (v === 3 && opcode !== 'start')) e.name = '';
    this.events.push(e);
  }

  private processEvent(opcode: ProcessOpcode, p: SimProcess, cpu: number, ts: bigint, header?: { tid: number; pid: number }): void {
    let version = this.o.processVersion;
    if (opcode === 'defunct' && version === 4) version = 5;
    const system = opcode === 'start' || opcode === 'end';
    const e: ProcessSpec = {
      kind: 'process', cpu, timestamp: ts, opcode, version, header: this.header(system ? 'processStartEnd' : 'processRundown'),
      uniqueProcessKey: p.key, processId: p.pid, parentId: p.parentId, sessionId: p.sessionId,
      exitStatus: opcode === 'end' || opcode === 'defunct' ? p.exitStatus : p === this.idle ? 0 : F.STATUS_STILL_ACTIVE,
      directoryTableBase: p.dtb, flags: p.flags, userSid: p.sid, imageFileName: p.image, commandLine: p.cmd,
      packageFullName: p.packageFullName, applicationId: p.applicationId,
    };
    if (header) {
      e.headerThreadId = header.tid;
      e.headerProcessId = header.pid;
    }
    if (version === 5) e.exitTime = p.truth.endTime !== null ? timestampToFiletime(this.session, p.truth.endTime) : 0n;
    this.events.push(e);
  }

  private readyEvent(cpu: number, ts: bigint, w: SimThread, adjustReason: number, adjustIncrement: number, flags: number): void {
    const cur = this.cpus[cpu]!.cur;
    // a SYSTEM header (headers.readyThread) names the readying thread
    this.events.push({
      kind: 'readyThread', cpu, timestamp: ts, header: this.header('readyThread'), headerThreadId: cur ? cur.tid : 0,
      headerProcessId: cur ? cur.proc.pid : 0, threadId: w.tid, adjustReason, adjustIncrement, flags,
    });
    this.readies.push({ timestamp: ts, cpu, threadId: w.tid, readyingThreadId: cur ? cur.tid : 0, adjustReason, adjustIncrement, flags });
    this.stackOf('readythread', cpu, ts, cur);
    this.cpus[cpu]!.lastReady = Number(ts);
  }

  private setNameEvent(cpu: number, ts: bigint, target: SimThread, name: string): void {
    const caller = this.cpus[cpu]!.cur ?? target;
    this.events.push({
      kind: 'setThreadName', cpu, timestamp: ts, header: this.header('setThreadName'), headerThreadId: caller.tid,
      headerProcessId: caller.proc.pid, processId: target.proc.pid, threadId: target.tid, name,
    });
    target.name = name;
    if (name !== '') target.truth.name = name;
  }

  /** The kernel frames of a stack of thread t (one of four stacks by thread id and event kind: deduplicated). */
  private kernelFrames(t: SimThread | null, kind: number): bigint[] {
    const base = (this.ptr === 8 ? 0xfffff80021400000n : 0x82400000n) + BigInt((((t ? t.tid : 0) + kind) & 3) * 0x1000);
    return [base + 0x13n, base + 0x240n, base + 0x5a7n].slice(0, 2 + (kind % 2));
  }

  /** The user frames of thread t (of a user process): from its Win32StartAddr, by event kind. */
  private userFrames(t: SimThread, kind: number): bigint[] {
    const w = t.win32StartAddr;
    return kind === 2 ? [w + 0x31n, w + 0x8n] : [w + 0x104n, w + 0x52n, w + 0x8n];
  }

  /** The key of a sample half (stack caching): a KeyDelete of the key's previous stack when the key is reused. */
  private keyOf(frames: bigint[], kernel: boolean, c: number): bigint {
    const text = `${kernel ? 'k' : 'u'}${frames.join(',')}`;
    const have = this.keyOfHalf.get(text);
    if (have !== undefined) return have;
    // eight keys per kind, reused round robin: a reused key first deletes its old stack (as the cache evicts)
    const slot = BigInt(this.keyOfHalf.size % 8);
    const key = (this.ptr === 8 ? 0xfffffa8003000000n : 0x83000000n) + (kernel ? 0n : 0x10000n) + slot * 0x100n;
    const old = this.halfOfKey.get(key);
    if (old) {
      this.events.push({ kind: 'stackWalk', cpu: c, timestamp: this.stamp(this.last + 1), opcode: 'keyDelete', stackKey: key, frames: old.frames });
      this.keyOfHalf.delete(`${old.kernel ? 'k' : 'u'}${old.frames.join(',')}`);
    }
    this.keyOfHalf.set(text, key);
    this.halfOfKey.set(key, { frames, kernel });
    return key;
  }

  /** The stack events of an event (stacks): StackWalk halves, or key references for samples. */
  private stackOf(table: StackTruth['table'], c: number, ts: bigint, t: SimThread | null): void {
    if (!this.o.stacks) return;
    const kind = table === 'cswitch' ? 0 : table === 'readythread' ? 1 : 2;
    const tid = t ? t.tid : 0;
    const pid = t ? t.proc.pid : 0;
    const kernelFrames = this.kernelFrames(t, kind);
    // ReadyThread runs in the kernel on behalf of the readying thread: no user half
    const userFrames = t && !t.proc.kernel && kind !== 1 ? this.userFrames(t, kind) : [];
    const ids = { eventTimestamp: ts, processId: pid, threadId: tid };
    if (kind !== 2) {
      this.events.push({ kind: 'stackWalk', cpu: c, timestamp: this.stamp(this.last + 1), opcode: 'stack', ...ids, frames: kernelFrames });
      if (userFrames.length > 0) this.events.push({ kind: 'stackWalk', cpu: c, timestamp: this.stamp(this.last + 1), opcode: 'stack', ...ids, frames: userFrames });
    } else {
      const kk = this.keyOf(kernelFrames, true, c);
      this.events.push({ kind: 'stackWalk', cpu: c, timestamp: this.stamp(this.last + 1), opcode: 'keyKernel', ...ids, stackKey: kk });
      if (userFrames.length > 0) {
        const uk = this.keyOf(userFrames, false, c);
        this.events.push({ kind: 'stackWalk', cpu: c, timestamp: this.stamp(this.last + 1), opcode: 'keyUser', ...ids, stackKey: uk });
      }
    }
    this.stacks.push({ eventTimestamp: ts, table, threadId: tid, processId: pid, kernelFrames, userFrames });
  }

  /** KeyRundown of every key still defined (stacks), at the end of the trace. */
  private stackRundown(): void {
    for (const [key, half] of this.halfOfKey) {
      this.events.push({ kind: 'stackWalk', cpu: 0, timestamp: this.stamp(this.last + 1), opcode: 'keyRundown', stackKey: key, frames: half.frames });
    }
  }

  /** SampledProfile on CPU c at time t of the thread running there; no random draw (profileInterval) */
  private sampleEvent(c: number, t: number): void {
    const cur = this.cpus[c]!.cur;
    const ts = this.stamp(t);
    // with images, a thread's samples fall in its process's own image (a lifetime of it: a reused process id loads another image at its base)
    const own = cur && this.o.images && cur.proc !== this.idle ? this.imageFiles(cur.proc)[0]! : null;
    const ip = own ? own[1] + BigInt((Number(ts) * 0x35) & 0xffff) : cur ? cur.win32StartAddr + BigInt((Number(ts) * 0x35) & 0xfff) : this.ptr === 8 ? 0xfffff8024266ffd0n : 0x8266ffd0n;
    const flags = (cur ? cur.prio : 16) << 3;
    this.events.push({
      kind: 'sampledProfile', cpu: c, timestamp: ts, header: this.header('sampledProfile'), headerThreadId: cur ? cur.tid : 0,
      headerProcessId: cur ? cur.proc.pid : 0, threadId: cur ? cur.tid : 0, instructionPointer: ip, flags,
    });
    this.samples.push({ timestamp: ts, cpu: c, threadId: cur ? cur.tid : 0, processId: cur ? cur.proc.pid : 0, instructionPointer: ip, flags });
    this.stackOf('samples', c, ts, cur);
  }

  /** The SampledProfile events of every CPU due before time t, in time order. */
  private samplesBefore(t: number): void {
    const every = this.o.profileInterval;
    for (;;) {
      let c = 0;
      for (let i = 1; i < this.cpus.length; i++) if (this.cpus[i]!.nextSample < this.cpus[c]!.nextSample) c = i;
      const cpu = this.cpus[c]!;
      if (cpu.nextSample >= t) return;
      this.sampleEvent(c, cpu.nextSample);
      cpu.nextSample = Math.max(cpu.nextSample + every, this.last + 1);
    }
  }

  /** The images of process p: [file name, base, size], its own image first (then ntdll.dll in user processes) */
  private imageFiles(p: SimProcess): [string, bigint, bigint][] {
    const w = this.ptr === 8;
    const files: [string, bigint, bigint][] = [];
    if (p.kernel) {
      const path = p === this.system ? '\\SystemRoot\\system32\\ntoskrnl.exe' : `\\SystemRoot\\system32\\${p.image}`;
      files.push([path, w ? 0xfffff80240000000n + BigInt(p.pid) * 0x1000000n : 0x82000000n + BigInt(p.pid & 0xff) * 0x100000n, 0xab6000n]);
    } else {
      files.push([`\\Device\\HarddiskVolume3\\Windows\\System32\\${p.image}`, w ? 0x7ff600000000n + BigInt(p.pid) * 0x100000n : 0x00400000n + BigInt(p.pid) * 0x1000n, 0x5d000n]);
      files.push(['\\Device\\HarddiskVolume3\\Windows\\System32\\ntdll.dll', w ? 0x7ffb45d00000n : 0x77a00000n, 0x1f8000n]);
    }
    return files;
  }

  /** The image events of process p (its image; ntdll.dll in user processes), no random draw (images) */
  private imageEvents(opcode: ImageOpcode, p: SimProcess, cpu: number, header?: { tid: number; pid: number }): void {
    if (!this.o.images || p === this.idle) return;
    const files = this.imageFiles(p);
    const rundown = opcode === 'dcStart' || opcode === 'dcEnd';
    for (const [fileName, imageBase, imageSize] of files) {
      const ts = this.stamp(this.last + 1);
      const imageChecksum = (fileName.length * 0x9e3779b1 + p.pid) >>> 0;
      const timeDateStamp = 0x5e9d3a1b + fileName.length;
      this.events.push({
        kind: 'image', cpu, timestamp: ts, opcode, version: this.o.imageVersion, header: this.header(rundown ? 'imageRundown' : 'imageLoadUnload'),
        headerThreadId: header?.tid, headerProcessId: header?.pid, processId: p.pid, imageBase, imageSize, imageChecksum, timeDateStamp,
        signatureLevel: 12, signatureType: 1, fileName,
      });
      this.images.push({ timestamp: ts, opcode, processId: p.pid, imageBase, imageSize, imageChecksum, timeDateStamp, fileName });
    }
  }

  // ---- rundowns

  private rundown(opcode: 'dcStart' | 'dcEnd'): void {
    const hdr = { tid: this.rundownThread.tid, pid: 4 };
    // the profile interval with the samples (G.4), in the session clock's ticks
    if (this.o.profileInterval > 0) {
      const ts = this.stamp(this.last + 1);
      const newInterval = Math.min(this.o.profileInterval, 0xffffffff); // 100 ns units at the default 10 MHz clock
      this.events.push({ kind: 'sampleInterval', cpu: 0, timestamp: ts, opcode, header: this.pointerHeader.system, newInterval });
      this.sampleIntervals.push({ timestamp: ts, opcode, newInterval });
    }
    const procs = [...this.liveProcs.values()];
    for (const p of procs) {
      if (opcode === 'dcStart') this.processEvent('dcStart', p, 0, this.stamp(this.last + 1));
      this.imageEvents(opcode, p, 0);
      if (p === this.idle) {
        for (let c = 0; c < this.o.cpus; c++) this.idleThreadEvent(opcode, c, this.stamp(this.last + 1), 0);
      } else {
        for (const t of p.live) this.threadEvent(opcode, t, 0, this.stamp(this.last + 1), hdr);
      }
      if (opcode === 'dcEnd') this.processEvent('dcEnd', p, 0, this.stamp(this.last + 1));
    }
  }

  // ---- scheduling primitives

  private bestReady(): SimThread | null {
    let best: SimThread | null = null;
    for (const t of this.readyQueue) {
      if (!best || t.prio > best.prio || (t.prio === best.prio && t.readySince < best.readySince)) best = t;
    }
    return best;
  }

  private takeReady(t: SimThread): void {
    const i = this.readyQueue.indexOf(t);
    if (i >= 0) this.readyQueue.splice(i, 1);
  }

  /** Switches CPU c from its current thread (state/wait reason given) to `nw` (null = idle). */
  private doSwitch(c: number, t: number, nw: SimThread | null, outState: number, outWr: number): bigint {
    const cpu = this.cpus[c]!;
    const old = cpu.cur;
    const ts = this.stamp(t);
    const tn = Number(ts);
    if (nw) this.takeReady(nw);
    const waitTicks = nw ? Math.min(0xffffffff, Math.floor((tn - nw.lastOut) / this.tick)) : 0;
    if (cpu.encoding === 'cswitch') {
      const version = this.rng.pick(this.o.cswitchVersions);
      const waitMode = old && outState === L.THREAD_STATE_WAITING && USER_MODE_WAITS.has(outWr) ? 1 : 0;
      let modeByte = waitMode;
      if (version === 3) modeByte |= this.rng.int(0, 3) << 1;
      if (version === 4) modeByte |= (this.rng.int(0, 3) << 1) | (this.rng.int(0, 3) << 4);
      const e: CSwitchSpec = {
        kind: 'cswitch', cpu: c, timestamp: ts, version, newThreadId: nw ? nw.tid : 0, oldThreadId: old ? old.tid : 0,
        newThreadPriority: nw ? nw.prio : 0, oldThreadPriority: old ? old.prio : 0,
        previousCState: old ? 0 : this.rng.int(0, 2), newThreadPriorityDecrement: 0,
        oldThreadWaitReason: old ? outWr : 0, oldThreadWaitMode: modeByte, oldThreadState: old ? outState : KTHREAD_RUNNING,
        oldThreadIdealProcessor: old ? old.ideal : c, newThreadWaitTime: waitTicks,
        oldThreadRemainingQuantum: old ? this.rng.int(-50_000, 2_000_000) : 0,
      };
      this.events.push(e);
      this.switches.push({
        cpu: c, timestamp: ts, oldThreadId: e.oldThreadId, newThreadId: e.newThreadId, oldThreadPriority: e.oldThreadPriority,
        oldThreadState: e.oldThreadState, oldThreadWaitReason: e.oldThreadWaitReason, newThreadPriority: e.newThreadPriority, encoding: 'cswitch',
      });
      this.stackOf('cswitch', c, ts, nw);
    } else {
      const e: CompactSwitchSpec = {
        kind: 'compactSwitch', cpu: c, timestamp: ts, oldThreadId: old ? old.tid : 0, oldThreadPriority: old ? old.prio : 0,
        oldThreadBasePriority: old ? old.base : 0, oldThreadState: old ? outState : 0, oldThreadWaitReason: old ? outWr : 0,
        newThreadWaitTime: waitTicks, header: this.pointerHeader.perfinfo as 'PERFINFO32' | 'PERFINFO64',
      };
      this.events.push(e);
      this.switches.push({
        cpu: c, timestamp: ts, oldThreadId: e.oldThreadId, newThreadId: nw ? nw.tid : 0,
        oldThreadPriority: old ? old.prio : null, oldThreadState: old ? outState : null,
        oldThreadWaitReason: old && outState === L.THREAD_STATE_WAITING ? outWr : null, newThreadPriority: null, encoding: 'compact',
      });
    }
    if (old) {
      old.lastOut = tn;
      old.cpu = -1;
      if (outState === KTHREAD_TERMINATED) old.state = 'dead';
      else if (outState === L.THREAD_STATE_WAITING) old.state = 'waiting';
      else {
        old.state = 'ready';
        old.readySince = tn;
        this.readyQueue.push(old);
      }
    }
    if (nw) {
      nw.state = 'running';
      nw.cpu = c;
    }
    cpu.cur = nw;
    cpu.switched = true;
    cpu.preempt = false;
    cpu.lastSwitch = tn;
    return ts;
  }

  /** Makes waiting (or new) thread w ready by an event on CPU c; wakes an idle CPU or asks for a preemption. */
  private ready(c: number, t: number, w: SimThread, isNew: boolean): void {
    const rng = this.rng;
    const cur = this.cpus[c]!.cur;
    readyAdjust(rng, w, isNew, ADJUST);
    const { reason, inc } = ADJUST;
    const flags = readyFlags(rng, cur !== null);
    const ts = this.stamp(t);
    this.readyEvent(c, ts, w, reason, inc, flags);
    w.state = 'ready';
    w.readySince = Number(ts);
    this.readyQueue.push(w);
    // dispatch: on this CPU if it is idle (a DPC), else on an idle CPU, else preempt the lowest-priority
    // running thread below w
    const soon = Number(ts) + rng.int(5, 80);
    if (!cur) {
      this.cpus[c]!.next = soon;
      return;
    }
    const idle = this.cpus.find((x) => x.cur === null);
    if (idle) {
      if (idle.next > soon) idle.next = soon;
      return;
    }
    let low = -1;
    for (let d = 0; d < this.cpus.length; d++) {
      const s = this.cpus[d]!;
      if (d === c || !s.cur || s.cur.mustExit) continue;
      if (s.cur.prio < w.prio && (low < 0 || s.cur.prio < this.cpus[low]!.cur!.prio)) low = d;
    }
    if (low >= 0) {
      const s = this.cpus[low]!;
      s.preempt = true;
      if (s.next > soon) s.next = soon;
    }
  }

  private pickWaiting(): SimThread | null {
    const waiting: SimThread[] = [];
    const urgent: SimThread[] = [];
    for (const t of this.liveThreads.values()) {
      if (t.state !== 'waiting') continue;
      waiting.push(t);
      if (t.mustExit) urgent.push(t);
    }
    if (urgent.length > 0) return this.rng.pick(urgent);
    return waiting.length > 0 ? this.rng.pick(waiting) : null;
  }

  private runGap(): number {
    const r = this.rng.next() % 100;
    if (r < 70) return this.rng.int(20, 2000);
    if (r < 95) return this.rng.int(2000, 20_000);
    return this.rng.int(20_000, 200_000);
  }

  private blockReason(): number {
    let wr: number;
    do wr = this.rng.pick(WAIT_REASONS);
    while (wr >= this.bias);
    return wr;
  }

  /** Switches the current thread of c out (state, wait reason) to the best ready thread or idle. */
  private switchOut(c: number, t: number, state: number, wr: number): void {
    this.doSwitch(c, t, this.bestReady(), state, wr);
  }

  // ---- lifecycle

  private createThread(c: number, t: number, creator: SimThread, proc: SimProcess, tid: number, name = ''): SimThread {
    const base = this.rng.pick(USER_BASE_PRIORITIES);
    const nt = this.newThread(tid, proc, base, name);
    const ts = this.stamp(t);
    nt.truth.startTime = ts;
    nt.lastOut = Number(ts);
    this.threadRows.push(nt.truth);
    this.threadEvent('start', nt, c, ts, { tid: creator.tid, pid: creator.proc.pid });
    this.ready(c, Number(ts) + 1, nt, true);
    return nt;
  }

  private createProcess(c: number, t: number, creator: SimThread, tpl: ProcessTemplate, pid: number): SimProcess {
    const ts = this.stamp(t);
    const p = this.newProcess(pid, creator.proc.pid, tpl, false, ts);
    this.processRows.push(p.truth);
    this.processEvent('start', p, c, ts, { tid: creator.tid, pid: creator.proc.pid });
    this.imageEvents('load', p, c, { tid: creator.tid, pid: p.pid });
    this.createThread(c, Number(ts) + 1, creator, p, this.freshId(this.usedTids, 0x40, 0x3fff));
    return p;
  }

  /** The running thread T of CPU c exits: Thread End (+ Process End for the last thread), then its final switch-out. */
  private exitThread(c: number, t: number, th: SimThread): void {
    const ts = this.stamp(t);
    this.threadEvent('end', th, c, ts, { tid: th.tid, pid: th.proc.pid });
    th.truth.endTime = ts;
    const p = th.proc;
    p.live.splice(p.live.indexOf(th), 1);
    this.liveThreads.delete(th.tid);
    if (p.terminating && p.live.length === 0) {
      this.imageEvents('unload', p, c, { tid: th.tid, pid: p.pid });
      const te = this.stamp(this.last + 1);
      p.truth.endTime = te;
      this.processEvent('end', p, c, te, { tid: th.tid, pid: p.pid });
      p.truth.exitStatus = p.exitStatus;
      p.ended = true;
      this.liveProcs.delete(p.pid);
      this.script.doomedEndTs = Number(te);
    }
    if (th === this.script.victim) this.script.victimDone = true;
    this.switchOut(c, this.last + 1 + this.rng.int(1, 50), KTHREAD_TERMINATED, WR_TERMINATED);
  }

  private isCreator(th: SimThread | null): th is SimThread {
    return !!th && !th.proc.kernel && !th.proc.terminating && !th.mustExit;
  }

  /** Scripted lifecycle steps the running thread `th` of CPU c can do now; returns true if it did one. */
  private scripted(c: number, t: number, th: SimThread): boolean {
    const s = this.script;
    const d = this.o.duration;
    const at = (f: number): boolean => t >= this.t0 + d * f;
    const rng = this.rng;
    if (!s.newProcess && at(0.2) && this.isCreator(th)) {
      s.newProcess = this.createProcess(c, t, th, NEW_PROCESS, this.freshId(this.usedPids, 0x10, 0x1fff));
      return true;
    }
    if (s.newProcess && s.grown < 2 && th.proc === s.newProcess && !th.mustExit && t >= Number(s.newProcess.truth.startTime) + 2000) {
      const nt = this.createThread(c, t, th, th.proc, this.freshId(this.usedTids, 0x40, 0x3fff));
      s.grown++;
      if (s.grown === 2) {
        // the creator names its new thread
        this.setNameEvent(c, this.stamp(this.last + 1), nt, 'Worker: spell check');
        s.namedNew = true;
      }
      return true;
    }
    if (!s.victim!.mustExit && at(0.35)) s.victim!.mustExit = true;
    if (s.doomed && !s.doomed.terminating && at(0.5)) {
      s.doomed.terminating = true;
      s.doomed.exitStatus = rng.pick([0, 1, -1073741510]); // 0xC000013A STATUS_CONTROL_C_EXIT
      for (const x of s.doomed.live) x.mustExit = true;
    }
    if (!s.tidReused && s.victimDone && at(0.65) && this.isCreator(th) && th.proc !== s.victim!.proc) {
      const tid = s.victim!.tid;
      const nt = this.createThread(c, t, th, th.proc, tid);
      this.reusedThreadIds.push(tid);
      s.tidReused = true;
      this.setNameEvent(c, this.stamp(this.last + 1), nt, 'ReusedTidWorker');
      return true;
    }
    if (!s.pidReused && s.defunct && at(0.75) && this.isCreator(th) && th.proc !== s.doomed) {
      const pid = s.doomed!.pid;
      this.createProcess(c, t, th, REUSED_PID_PROCESS, pid);
      this.reusedProcessIds.push(pid);
      s.pidReused = true;
      return true;
    }
    if (!s.renamed && at(0.3) && th.name !== '') {
      this.setNameEvent(c, this.stamp(t), th, `${th.name} (renamed)`);
      s.renamed = true;
      return true;
    }
    if (!s.emptyName && at(0.6) && th.name !== '') {
      this.setNameEvent(c, this.stamp(t), th, '');
      s.emptyName = true;
      return true;
    }
    if (s.setNames < 6 && th.name === '' && th.truth.name === null && !th.proc.kernel && rng.chance(0.02)) {
      this.setNameEvent(c, this.stamp(t), th, `${th.proc.image.replace(/\.exe$/i, '')} worker ${th.tid}`);
      s.setNames++;
      return true;
    }
    return false;
  }

  private scriptDone(): boolean {
    const s = this.script;
    return !!s.newProcess && s.grown === 2 && s.victimDone && !!s.doomed?.ended && s.defunct && s.tidReused && s.pidReused &&
      s.renamed && s.emptyName && s.namedNew;
  }

  // ---- extras

  private extras(c: number, t: number): void {
    const rng = this.rng;
    const cpu = this.cpus[c]!;
    if (this.o.spinlocks > 0 && cpu.cur && rng.chance(this.o.spinlocks)) {
      const ts = this.stamp(t);
      const cycles = Number(ts) * 300;
      const hold = rng.int(20, 20_000);
      const wide = this.ptr === 8;
      const base = wide ? 0xfffff80000000000n : 0x80000000n;
      const contended = rng.chance(0.3);
      this.events.push({
        kind: 'spinlock', cpu: c, timestamp: ts, header: this.pointerHeader.perfinfo as 'PERFINFO32' | 'PERFINFO64',
        spinLockAddress: base + BigInt(rng.int(0, 63) * 0x40 + 0x1000), callerAddress: base + BigInt(rng.int(0, 0xfffff)),
        acquireTime: BigInt(cycles - hold), releaseTime: BigInt(cycles), waitTimeInCycles: contended ? rng.int(1, 100_000) : 0,
        spinCount: contended ? rng.int(1, 5000) : 0, threadId: cpu.cur.tid, interruptCount: rng.chance(0.9) ? 0 : rng.int(1, 3),
        irql: rng.pick([0, 2, 2, 2, 5, 12]), acquireDepth: rng.int(1, 3), acquireMode: rng.int(0, 4), executeDpc: rng.chance(0.2),
        executeIsr: rng.chance(0.05),
      });
    }
    if (this.o.noise > 0 && rng.chance(this.o.noise)) {
      const kind = rng.chance(0.75) ? rng.pick(this.ptr === 8 ? KINDS_64 : KINDS_32) : rng.pick(HEADER_KINDS);
      const payload = rng.bytes(rng.int(0, 120));
      this.events.push(noiseEvent(rng, kind, c, this.stamp(t), payload, this.providers, false, true));
    }
  }

  // ---- one scheduler step on CPU c at time t

  private step(c: number, t: number): void {
    const rng = this.rng;
    const cpu = this.cpus[c]!;
    const th = cpu.cur;
    this.extras(c, t);
    if (this.script.doomedEndTs >= 0 && !this.script.defunct && t >= this.script.doomedEndTs + 5000) {
      this.processEvent('defunct', this.script.doomed!, c, this.stamp(t));
      this.script.defunct = true;
    }
    if (!th) {
      const best = this.bestReady();
      if (best) {
        this.doSwitch(c, t, best, 0, 0);
        cpu.next = this.last + this.runGap();
        return;
      }
      const w = cpu.switched && rng.chance(0.6) ? this.pickWaiting() : null;
      if (w) {
        this.ready(c, t, w, false); // a timer DPC on the idle CPU; sets this CPU's next action
        return;
      }
      cpu.next = this.last + rng.int(100, 20_000);
      return;
    }
    if (!cpu.switched) {
      this.switchOut(c, t, L.THREAD_STATE_WAITING, this.blockReason());
      cpu.next = this.last + this.runGap();
      return;
    }
    if (th.mustExit) {
      this.exitThread(c, t, th);
      cpu.next = this.last + this.runGap();
      return;
    }
    const best = this.bestReady();
    if (cpu.preempt && best && best.prio > th.prio) {
      this.doSwitch(c, t, best, rng.chance(0.85) ? KTHREAD_READY : KTHREAD_DEFERRED_READY, WR_PREEMPTED);
      cpu.next = this.last + this.runGap();
      return;
    }
    cpu.preempt = false;
    if (this.scripted(c, t, th)) {
      cpu.next = this.last + rng.int(20, 2000);
      return;
    }
    const r = rng.float();
    if (r < 0.42) {
      this.switchOut(c, t, L.THREAD_STATE_WAITING, this.blockReason());
    } else if (r < 0.74) {
      const w = this.pickWaiting();
      if (w) this.ready(c, t, w, false);
      else this.switchOut(c, t, L.THREAD_STATE_WAITING, this.blockReason());
    } else if (r < 0.9) {
      if (best && best.prio >= th.prio) {
        const yieldOut = rng.chance(0.15);
        this.doSwitch(c, t, best, KTHREAD_READY, yieldOut ? WR_YIELD_EXECUTION : WR_QUANTUM_END);
        th.prio = Math.max(th.base, th.prio - 1);
      } else if (th.prio > th.base) {
        th.prio--; // quantum end without a switch: the boost decays
      }
    }
    cpu.next = Math.max(cpu.next, this.last + this.runGap());
    if (cpu.next <= t) cpu.next = this.last + this.runGap();
  }

  run(): void {
    this.buildWorld();
    const procs = [...this.liveProcs.values()];
    // rows of the processes and threads alive at the start, in rundown order
    this.rundownRows(procs);
    this.rundown('dcStart');
    for (const cpu of this.cpus) cpu.next = this.last + this.rng.int(1, 500);
    if (this.o.profileInterval > 0) this.cpus.forEach((cpu, c) => (cpu.nextSample = this.last + 1 + Math.floor((this.o.profileInterval * c) / this.cpus.length)));
    const end = this.t0 + this.o.duration;
    const hardEnd = this.t0 + this.o.duration * 8;
    for (;;) {
      let c = 0;
      for (let i = 1; i < this.cpus.length; i++) if (this.cpus[i]!.next < this.cpus[c]!.next) c = i;
      const t = Math.max(this.cpus[c]!.next, this.last + 1);
      if (t >= end && this.scriptDone()) break;
      if (t >= hardEnd) throw new Error('simulateSchedule: internal error, the scripted lifecycle did not complete');
      if (this.o.profileInterval > 0) {
        this.samplesBefore(t);
        if (t <= this.last) continue; // the CPU's step comes after the samples
      }
      this.step(c, t);
      if (this.cpus[c]!.next <= this.last) this.cpus[c]!.next = this.last + 1;
    }
    // every CPU's last ReadyThread precedes its last switch
    for (let c = 0; c < this.cpus.length; c++) {
      const cpu = this.cpus[c]!;
      if (cpu.lastReady < cpu.lastSwitch) continue;
      if (cpu.cur) this.switchOut(c, this.last + 1, L.THREAD_STATE_WAITING, this.blockReason());
      else {
        let nw = this.bestReady();
        if (!nw) {
          const w = this.pickWaiting();
          if (w) {
            this.ready(c, this.last + 1, w, false);
            nw = w;
          }
        }
        if (nw) this.doSwitch(c, this.last + 1, nw, 0, 0);
        else if (cpu.lastReady >= cpu.lastSwitch) throw new Error('simulateSchedule: internal error, no switch after the last ready');
      }
    }
    this.stackRundown();
    this.rundown('dcEnd');
  }

  private rundownRows(procs: SimProcess[]): void {
    for (const p of procs) {
      this.processRows.push(p.truth);
      if (p === this.idle) this.threadRows.push({ threadId: 0, processId: 0, startTime: null, endTime: null, name: null });
      else for (const t of p.live) this.threadRows.push(t.truth);
    }
  }

  result(): SimulatedSchedule {
    const switches = this.switches.slice().sort((a, b) => a.cpu - b.cpu || (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    return {
      description: { ...this.o.trace, events: this.events },
      threads: this.threadRows,
      processes: this.processRows,
      switches,
      readies: this.readies,
      samples: this.samples,
      images: this.images,
      stacks: this.stacks,
      sampleIntervals: this.sampleIntervals,
      cpuEncodings: this.o.encodings.slice(),
      reusedThreadIds: this.reusedThreadIds.slice(),
      reusedProcessIds: this.reusedProcessIds.slice(),
    };
  }
}

/**
 * Simulates a scheduler and returns the trace (for writeTrace) with its ground truth. Deterministic: the same
 * options give the same events and truth.
 *
 * The trace: a start rundown on CPU 0 (per process: Process DCStart, then Thread DCStart of its threads; the
 * idle thread tid 0 once per CPU), then scheduling: threads block (state Waiting, a wait reason), are readied
 * by a ReadyThread logged on the CPU of the readying thread (or of an idle CPU's DPC, readying thread 0) and
 * only then switched in, strictly later; preempted threads (state Ready or DeferredReady, WrPreempted,
 * WrQuantumEnd, WrYieldExecution) get no ReadyThread; Unwait/Boost priority boosts that decay at quantum end.
 * Scripted: a new process with three threads (Start events; the first logged by a thread of its parent),
 * a thread that exits alone, a process that exits (End before each thread's final switch-out; Process End
 * after the last Thread End, exit status ≠ 259) and later a Defunct for it, a new thread of another process
 * that reuses the exited thread's TID, a new process that reuses the exited process's PID, SetName events
 * (a rename, an empty name, names of new threads); then an end rundown (per process: Thread DCEnd, Process
 * DCEnd; tid 0 once per CPU).
 */
export function simulateSchedule(options: ScheduleOptions): SimulatedSchedule {
  const sim = new Simulation(normalize(options));
  sim.run();
  return sim.result();
}
