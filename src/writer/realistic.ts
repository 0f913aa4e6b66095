// A realistic mixed NT-Kernel-Logger trace of any size, streamed with bounded memory (the loop of
// generate.ts): a scheduler model — per-CPU running threads that block, are readied by ReadyThread events
// and switched in (compact switches by default), get preempted and take quantum ends — beside thread churn
// (short-lived threads with Thread Start, SetName and End; processes that start and end), SetName renames,
// Process/Thread DCStart and DCEnd rundowns at both ends, SampledProfile events on every CPU each
// millisecond, SpinLock events, and hundreds of kinds of provider events (EVENT_HEADER, many provider
// GUIDs and event ids, a few with extended items) plus classic kernel and MOF noise.
//
// Decisions:
// * Rates: the model's probabilities are per scheduler step; bench/trace-rates.ts measures what they give
//   per MiB of file (the figures are in bench/README.md, "Realistic trace"), and test/realistic.test.ts
//   holds them within bounds: at least ~1,000 Thread/SetName events and ~2,000 samples per MiB.
// * Every event gets a distinct timestamp (one clock, +1 at least per event), so per-CPU streams are
//   strictly time ordered and the buffers flush in the order the kernel would flush them.
// * Memory is bounded by the world (threads and processes alive, kept about constant by the churn), never by
//   the file size; the end rundown is built at the end from the live world.
// * Consistent identities: a thread runs on at most one CPU; a compact switch's old thread is its CPU's
//   running thread; every thread that runs was seen first in the start rundown or a Thread Start; a
//   process ends (Process End) right after the Thread End of its last thread.
// Browser-safe: no node imports.
import * as L from '../generated/layout.js';
import { compactTickLimit } from './compact.js';
import { align8, bytesToGuid } from './events.js';
import { generateFromSpec, generatorSession, NOISE_HOOK_IDS, streamFromSpec } from './generate.js';
import type { SourceSpec, TraceSource } from './generate.js';
import { DEFAULT_GROUP_MASK1, normalizeOptions } from './logfile.js';
import { Rng } from './random.js';
import * as F from './sched-layout.js';
import { measureProcess, measureThread } from './sched-events.js';
import {
  GENERIC_NAMES,
  GROUP_MASK0,
  PERF_DISPATCHER_MASK1,
  readyAdjust,
  readyFlags,
  SYSTEM_BASE_PRIORITIES,
  TEMPLATES,
  USER_BASE_PRIORITIES,
  USER_MODE_WAITS,
  USER_SID,
  WAIT_REASONS,
} from './schedule.js';
import type { ProcessTemplate, ReadyAdjust, SwitchEncoding } from './schedule.js';
import type {
  EventSpec,
  HeaderKind,
  IdentityHeaderKind,
  PerfInfoKind,
  ProcessOpcode,
  ProcessSpec,
  RawEventSpec,
  ThreadOpcode,
  ThreadSpec,
  TraceOptions,
  WrittenTrace,
} from './types.js';

export interface RealisticTraceOptions {
  seed: number;
  /** approximate file size in bytes (at least the two rundowns: about 0.5 MB with the default world) */
  targetBytes: number;
  /** processors, default 4 */
  cpus?: number;
  /** how context switches are logged: compact batches on every CPU (default, as Windows 10+ traces with
   *  compact switches do), CSwitch events, or 'mixed' (even CPUs CSwitch, odd CPUs compact) */
  switches?: SwitchEncoding | 'mixed';
  /** processes alive at the start, Idle and System included; default 100 (5…2000) */
  processes?: number;
  /** threads alive at the start, about; default 1200 (processes + cpus … 20000) */
  threads?: number;
  compress?: boolean;
  /** default 8 */
  pointerSize?: 4 | 8;
  /** default 0x10000 */
  bufferSize?: number;
}

// ---------------------------------------------------------------------------------------------
// the model's rates (per scheduler step; see the file comment)

/** a scheduler step: the running thread blocks (Waiting) */
const P_BLOCK = 0.45;
/** … or readies a waiting thread (ReadyThread), which may preempt it; otherwise a quantum end */
const P_WAKE = 0.3;
/** SpinLock events per step of a busy CPU */
const P_SPINLOCK = 0.06;
/** provider (EVENT_HEADER) events per step of a busy CPU */
const P_PROVIDER = 0.12;
/** classic kernel / MOF noise events per step */
const P_KERNEL_NOISE = 0.03;
/** a user thread creates a short-lived thread (Thread Start, often a SetName, ReadyThread) */
const P_CREATE_THREAD = 0.008;
/** a user thread starts a process (Process Start, its threads); an old process is made to exit */
const P_CREATE_PROCESS = 0.0002;
/** a user thread names itself again (SetName) */
const P_RENAME = 0.06;
/** a new thread is named by its creator right after its Start */
const P_NAME_NEW = 0.8;
/** time slices of a short-lived thread before it exits */
const SHORT_SLICES_MAX = 12;
/** SampledProfile interval per CPU in QPC ticks (1 ms at the default 10 MHz) */
const SAMPLE_INTERVAL = 10_000;

/** ticks to a CPU's next scheduler step */
function stepGap(rng: Rng): number {
  const r = rng.next() % 100;
  if (r < 80) return rng.int(20, 1500);
  if (r < 98) return rng.int(1500, 6000);
  return rng.int(6000, 30_000);
}

// ---------------------------------------------------------------------------------------------
// catalogs

const THREAD_NAMES: readonly string[] = [
  ...GENERIC_NAMES,
  'ThreadPoolForegroundWorker', 'ThreadPoolBackgroundWorker', 'ThreadPoolServiceThread', 'ThreadPoolSingleThreadSharedForeground0',
  'Chrome_ChildIOThread', 'Chrome_IOThread', 'CrBrowserMain', 'CrRendererMain', 'Compositor', 'CompositorTileWorker1',
  'VizCompositorThread', 'AudioOutputDevice', 'MemoryInfra', 'HangWatcher', 'NetworkService', 'CacheThread_BlockFile',
  'DedicatedWorker thread', 'ServiceWorker thread', '.NET ThreadPool Worker', '.NET ThreadPool Gate', '.NET Tiered Compilation Worker',
  '.NET Finalizer', '.NET Timer', '.NET BGC', '.NET Server GC', 'ShellTaskScheduler', 'DirectComposition Worker', 'D3D11 Worker',
  'MediaFoundation Work Queue', 'TaskSchedulerRegisteredWaits', 'libuv-worker', 'V8 DefaultWorker', 'v8:ProfEvntProc', 'SQLite Worker',
  'CrashpadMain', 'IPC I/O Parent', 'Socket Thread', 'DOM Worker', 'JS Watchdog', 'BgHangManager', 'ImageIO', 'LevelDBEnv',
  'NetworkNotificationThreadWin', 'BrowserWatchdog', 'WinHttp Worker', 'Search Indexer Worker', 'OneDrive Sync Worker',
];
/** names that get a number: `${base} #${n}` */
const NUMBERED_NAMES: readonly string[] = ['StreamTrans', 'DOM Worker', 'ThreadPoolForegroundWorker', 'Worker'];
const NUMBERED_MAX = 64;

/** processes that come and go */
const CHURN_TEMPLATES: readonly ProcessTemplate[] = [
  { image: 'conhost.exe', cmd: '\\??\\C:\\Windows\\system32\\conhost.exe 0x4', sid: USER_SID, session: 1 },
  { image: 'git.exe', cmd: 'git status --porcelain=v2 --untracked-files=all', sid: USER_SID, session: 1, names: ['git worker'] },
  { image: 'node.exe', cmd: '"C:\\Program Files\\nodejs\\node.exe" C:\\Users\\dev\\src\\app\\server.js', sid: USER_SID, session: 1, names: ['libuv-worker', 'V8 DefaultWorker'] },
  { image: 'cl.exe', cmd: 'cl.exe /c /O2 /EHsc /nologo src\\decoder.cpp', sid: USER_SID, session: 1 },
  { image: 'link.exe', cmd: 'link.exe /nologo /OUT:build\\app.exe build\\decoder.obj', sid: USER_SID, session: 1 },
  { image: 'SearchProtocolHost.exe', cmd: '"C:\\Windows\\system32\\SearchProtocolHost.exe" Global\\UsGthrFltPipeMssGthrPipe7_', sid: 'S-1-5-18', session: 0 },
  { image: 'backgroundTaskHost.exe', cmd: '"C:\\Windows\\system32\\backgroundTaskHost.exe" -ServerName:BackgroundTaskHost.WebAccountProvider', sid: USER_SID, session: 1 },
  { image: 'WmiPrvSE.exe', cmd: 'C:\\Windows\\system32\\wbem\\wmiprvse.exe -secured -Embedding', sid: 'S-1-5-20', session: 0 },
  { image: 'msedgewebview2.exe', cmd: '"C:\\Program Files (x86)\\Microsoft\\EdgeWebView\\Application\\msedgewebview2.exe" --type=renderer', sid: USER_SID, session: 1, names: ['CrRendererMain', 'Compositor'] },
  { image: 'powershell.exe', cmd: '"C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe" -NoProfile -Command Get-Process', sid: USER_SID, session: 1, names: ['.NET ThreadPool Worker'] },
  { image: 'dllhost.exe', cmd: 'C:\\Windows\\system32\\DllHost.exe /Processid:{AB8902B4-09CA-4BB6-B78D-A8F59079A8D5}', sid: USER_SID, session: 1 },
  { image: 'taskhostw.exe', cmd: 'taskhostw.exe Install $(Arg0)', sid: USER_SID, session: 1 },
];

const EXIT_STATUSES = [0, 0, 0, 0, 1, -1073741510]; // 0xC000013A STATUS_CONTROL_C_EXIT
const KTHREAD_READY = 1;
const KTHREAD_RUNNING = 2;
const KTHREAD_TERMINATED = 4;
const KTHREAD_DEFERRED_READY = 7;
const WR_TERMINATED = 22;
const WR_QUANTUM_END = 30;
const WR_PREEMPTED = 32;
const WR_YIELD_EXECUTION = 33;
/** PERFINFO_LOG_TYPE_SAMPLED_PROFILE */
const HOOK_SAMPLED_PROFILE = 0x0f2e;
/** Masks[1] PERF_PROFILE */
const PERF_PROFILE_MASK1 = 0x00000002;

interface ProviderKind {
  provider: string;
  eventId: number;
  version: number;
  opcode: number;
  task: number;
  level: number;
  channel: number;
  keyword: bigint;
  minSize: number;
  maxSize: number;
  items: { extType: number; data: Uint8Array }[] | undefined;
}

interface KernelKind {
  headerType: HeaderKind;
  hookId: number;
  version: number;
  provider?: string;
  classType?: number;
  minSize: number;
  maxSize: number;
}

// ---------------------------------------------------------------------------------------------
// the world

const WAITING = 0;
const READY = 1;
const RUNNING = 2;
const DEAD = 3;
const POOL_HOT = 0;
const POOL_COLD = 1;
const POOL_SHORT = 2;

interface RProcess {
  pid: number;
  parentId: number;
  session: number;
  image: string;
  cmd: string;
  sid: string;
  key: bigint;
  dtb: bigint;
  flags: number;
  packageFullName: string;
  applicationId: string;
  live: RThread[];
  kernel: boolean;
  doomed: boolean;
  exitStatus: number;
  /** slot in the list of processes that may be made to exit, -1 if none */
  churnSlot: number;
}

interface RThread {
  tid: number;
  proc: RProcess;
  base: number;
  prio: number;
  state: number;
  /** waiting pool (POOL_*) and slot in it (-1 when not waiting) */
  pool: number;
  slot: number;
  name: string;
  /** short-lived: time slices left before it exits */
  short: boolean;
  slices: number;
  /** exits the next time it runs */
  exiting: boolean;
  lastOut: number;
  ideal: number;
  stackBase: bigint;
  userStackBase: bigint;
  win32StartAddr: bigint;
  tebBase: bigint;
}

interface RCpu {
  cur: RThread | null;
  encoding: SwitchEncoding;
  /** time of the next scheduler step / SampledProfile */
  next: number;
  nextSample: number;
}

/** Produces the events of a realistic trace in time order (TraceSource of the generation loop). */
class RealisticEventSource implements TraceSource {
  /** the adjustment of the thread being readied (readyAdjust's output) */
  private readonly adjust: ReadyAdjust = { reason: 0, inc: 0 };
  /** the clock: timestamp of the latest event */
  t: number;
  private readonly rng: Rng;
  private readonly ptr: 4 | 8;
  private readonly bias: number;
  private readonly nCpus: number;
  private readonly tick: number;
  private readonly bufferSize: number;
  private readonly out: EventSpec[] = [];
  private head = 0;
  private readonly cpus: RCpu[] = [];
  private readonly procs = new Map<number, RProcess>();
  private readonly liveTids = new Set<number>();
  private liveThreads = 0;
  private readonly pools: RThread[][] = [[], [], []];
  private readonly readyQueue: RThread[] = [];
  private readyHead = 0;
  private readonly churnable: RProcess[] = [];
  private readonly targetProcesses: number;
  private readonly pool: Uint8Array;
  private readonly providerKinds: ProviderKind[] = [];
  private readonly providerCum: Float64Array;
  private readonly kernelKinds: KernelKind[] = [];
  private readonly spinLocks: bigint[] = [];
  private idle!: RProcess;
  private system!: RProcess;
  private rundownThread!: RThread;
  private readonly maxThreadEvent: number;
  private readonly maxProcessEvent: number;
  private closed = false;

  constructor(o: Normalized, bias: number, ptr: 4 | 8) {
    this.rng = new Rng(o.seed);
    this.ptr = ptr;
    this.bias = bias;
    this.nCpus = o.cpus;
    this.bufferSize = o.bufferSize;
    const n = normalizeOptions(o.trace);
    this.tick = Math.max(1, Number(compactTickLimit(n.clockType, n.timerResolution, n.perfFreq, n.cpuSpeedInMHz) / BigInt(L.CCS_BATCH_TICK_LIMIT)));
    this.t = Number(n.headerTimestamp) + 1000;
    this.targetProcesses = o.processes;
    const rng = this.rng;
    this.pool = rng.bytes(1 << 16);
    for (let c = 0; c < o.cpus; c++) {
      const encoding: SwitchEncoding = o.switches === 'mixed' ? (c % 2 === 0 ? 'cswitch' : 'compact') : o.switches;
      this.cpus.push({ cur: null, encoding, next: 0, nextSample: 0 });
    }
    this.providerCum = this.buildProviders();
    this.buildKernelKinds();
    for (let i = 0; i < 64; i++) this.spinLocks.push(this.kernelAddr() + BigInt(rng.int(0, 63) * 0x40));
    // the largest rundown events (the end rundown's room is reserved from them)
    let longest = '';
    for (const s of [...THREAD_NAMES, ...TEMPLATES.flatMap((t) => t.names ?? []), ...CHURN_TEMPLATES.flatMap((t) => t.names ?? [])]) {
      if (s.length > longest.length) longest = s;
    }
    for (const s of NUMBERED_NAMES) if (`${s} #${NUMBERED_MAX}`.length > longest.length) longest = `${s} #${NUMBERED_MAX}`;
    this.maxThreadEvent = align8(measureThread({ kind: 'thread', cpu: 0, timestamp: 0n, opcode: 'dcEnd', version: 3, header: this.systemHeader, processId: 0, threadId: 0, headerThreadId: 0, headerProcessId: 0, name: longest }, 0, ptr));
    let maxProcess = 0;
    for (const tpl of [...TEMPLATES, ...CHURN_TEMPLATES, { image: 'System', cmd: '', sid: 'S-1-5-18', session: 0 }]) {
      const e = this.processSpec('dcEnd', this.templateProcess(tpl, 4, 0, false), 0, 0n);
      maxProcess = Math.max(maxProcess, align8(measureProcess(e, 0, ptr)));
    }
    this.maxProcessEvent = maxProcess;
    this.buildWorld(o);
    this.rundown('dcStart');
    for (const cpu of this.cpus) {
      cpu.next = this.t + rng.int(1, 500);
      cpu.nextSample = this.t + rng.int(1, SAMPLE_INTERVAL);
    }
  }

  // ---- TraceSource

  next(): EventSpec {
    if (this.head >= this.out.length) {
      this.out.length = 0;
      this.head = 0;
      while (this.out.length === 0) this.advance();
    }
    return this.out[this.head++]!;
  }

  poolBytes(n: number): Uint8Array {
    const at = this.rng.int(0, this.pool.length - n);
    return this.pool.subarray(at, at + n);
  }

  closingBuffers(): number {
    if (this.closed) return 0;
    const usable = this.bufferSize - L.WMI_BUFFER_HEADER_SIZE - Math.max(this.maxThreadEvent, this.maxProcessEvent);
    const bytes = (this.liveThreads + this.nCpus) * this.maxThreadEvent + this.procs.size * this.maxProcessEvent;
    return Math.ceil(bytes / usable) + 1;
  }

  /** the events still queued, then the end rundown */
  closing(): EventSpec[] {
    const rest = this.out.slice(this.head);
    this.out.length = 0;
    this.head = 0;
    this.rundown('dcEnd');
    this.closed = true;
    const events = rest.concat(this.out);
    this.out.length = 0;
    return events;
  }

  // ---- helpers

  private stamp(t: number): bigint {
    this.t = t > this.t ? t : this.t + 1;
    return BigInt(this.t);
  }

  private get systemHeader(): IdentityHeaderKind {
    return this.ptr === 8 ? 'SYSTEM64' : 'SYSTEM32';
  }

  private get perfinfoHeader(): PerfInfoKind {
    return this.ptr === 8 ? 'PERFINFO64' : 'PERFINFO32';
  }

  private kernelAddr(): bigint {
    if (this.ptr === 8) return 0xfffff80000000000n + BigInt(this.rng.int(0, 0x7ffffff)) * 0x1000n;
    return 0x80000000n + BigInt(this.rng.int(0, 0x3ffff)) * 0x1000n;
  }

  private userAddr(): bigint {
    if (this.ptr === 8) return 0x7ff000000000n + BigInt(this.rng.int(0, 0xffffff)) * 0x10n;
    return 0x10000000n + BigInt(this.rng.int(0, 0x3fffff)) * 0x10n;
  }

  private freshTid(lo = 0x40, hi = 0xffff): number {
    let id: number;
    do id = this.rng.int(lo, hi) * 4;
    while (this.liveTids.has(id));
    this.liveTids.add(id);
    return id;
  }

  private freshPid(): number {
    let id: number;
    do id = this.rng.int(0x10, 0x7fff) * 4;
    while (this.procs.has(id));
    return id;
  }

  private newName(): string {
    const rng = this.rng;
    if (rng.chance(0.25)) return `${rng.pick(NUMBERED_NAMES)} #${rng.int(1, NUMBERED_MAX)}`;
    return rng.pick(THREAD_NAMES);
  }

  // ---- catalogs

  /** provider event kinds with Zipf-like weights; returns their cumulative weights */
  private buildProviders(): Float64Array {
    const rng = this.rng;
    for (let p = 0; p < 40; p++) {
      const provider = bytesToGuid(rng.bytes(16));
      const tracelogging = rng.chance(0.3);
      const n = rng.int(3, 24);
      let id = rng.int(0, 20);
      for (let i = 0; i < n; i++) {
        id += rng.int(1, 12);
        const minSize = rng.int(0, 64);
        let items: ProviderKind['items'];
        if (tracelogging) items = [{ extType: 11, data: this.pool.subarray(i * 64, i * 64 + rng.int(12, 60)) }]; // EVENT_SCHEMA_TL
        else if (rng.chance(0.15)) items = [{ extType: 1, data: this.pool.subarray(i * 16, i * 16 + 16) }]; // RELATED_ACTIVITYID
        this.providerKinds.push({
          provider,
          eventId: tracelogging ? i : id,
          version: rng.int(0, 2),
          opcode: rng.pick([0, 0, 0, 1, 2, 10, 11]),
          task: tracelogging ? 0 : rng.int(0, 60),
          level: rng.pick([4, 4, 4, 5, 3, 2]),
          channel: rng.pick([0, 0, 11, 16, 17]),
          keyword: rng.bigint64() & 0x80000000000000ffn,
          minSize,
          maxSize: minSize + rng.int(0, 220),
          items,
        });
      }
    }
    const kinds = this.providerKinds;
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
    }
    const cum = new Float64Array(kinds.length);
    let acc = 0;
    for (let i = 0; i < kinds.length; i++) cum[i] = acc += 1 / (i + 1) ** 0.9;
    for (let i = 0; i < kinds.length; i++) cum[i] /= acc;
    return cum;
  }

  private buildKernelKinds(): void {
    const rng = this.rng;
    const wide = this.ptr === 8;
    for (const hookId of NOISE_HOOK_IDS) {
      const minSize = rng.int(8, 48) & ~7;
      this.kernelKinds.push({
        headerType: rng.chance(0.5) ? (wide ? 'SYSTEM64' : 'SYSTEM32') : wide ? 'PERFINFO64' : 'PERFINFO32',
        hookId,
        version: rng.int(2, 4),
        minSize,
        maxSize: minSize + rng.int(0, 120),
      });
    }
    for (let i = 0; i < 4; i++) {
      const minSize = rng.int(8, 64);
      this.kernelKinds.push({
        headerType: i < 3 ? (wide ? 'FULL_HEADER64' : 'FULL_HEADER32') : wide ? 'INSTANCE64' : 'INSTANCE32',
        hookId: 0,
        version: rng.int(0, 2),
        provider: bytesToGuid(rng.bytes(16)),
        classType: rng.int(1, 40),
        minSize,
        maxSize: minSize + rng.int(0, 200),
      });
    }
  }

  // ---- world construction and rundowns

  private templateProcess(tpl: ProcessTemplate, pid: number, parentId: number, kernel: boolean): RProcess {
    return {
      pid, parentId, session: tpl.session, image: tpl.image, cmd: tpl.cmd, sid: tpl.sid, key: this.kernelAddr(),
      dtb: BigInt(this.rng.int(0x100, 0xfffff)) * 0x1000n, flags: tpl.flags ?? 0, packageFullName: tpl.packageFullName ?? '',
      applicationId: tpl.applicationId ?? '', live: [], kernel, doomed: false, exitStatus: F.STATUS_STILL_ACTIVE, churnSlot: -1,
    };
  }

  private addProcess(p: RProcess, churn: boolean): RProcess {
    this.procs.set(p.pid, p);
    if (churn) {
      p.churnSlot = this.churnable.length;
      this.churnable.push(p);
    }
    return p;
  }

  private addThread(tid: number, proc: RProcess, base: number, name: string, short: boolean): RThread {
    const kernel = proc.kernel;
    const th: RThread = {
      tid, proc, base, prio: base, state: WAITING, pool: short ? POOL_SHORT : this.rng.chance(0.2) ? POOL_HOT : POOL_COLD, slot: -1,
      name, short, slices: short ? this.rng.int(1, SHORT_SLICES_MAX) : 0, exiting: false, lastOut: this.t, ideal: this.rng.int(0, this.nCpus - 1),
      stackBase: this.kernelAddr() + 0x6000n, userStackBase: kernel ? 0n : this.userAddr() & ~0xfffn,
      win32StartAddr: kernel ? this.kernelAddr() : this.userAddr(), tebBase: kernel ? 0n : this.userAddr() & ~0xfffn,
    };
    proc.live.push(th);
    this.liveTids.add(tid);
    this.liveThreads++;
    return th;
  }

  private buildWorld(o: Normalized): void {
    const rng = this.rng;
    this.idle = this.addProcess(this.templateProcess({ image: 'Idle', cmd: '', sid: 'S-1-5-18', session: F.SESSION_ID_NONE }, 0, 0, true), false);
    this.idle.exitStatus = 0;
    this.system = this.addProcess(this.templateProcess({ image: 'System', cmd: '', sid: 'S-1-5-18', session: F.SESSION_ID_NONE }, 4, 0, true), false);
    const users: RProcess[] = [];
    for (let i = 0; i < o.processes - 2; i++) {
      const tpl = TEMPLATES[i % TEMPLATES.length]!;
      const kernel = tpl.image === 'Registry';
      const parent = kernel || users.length === 0 ? 4 : rng.pick(users).pid;
      // Registry, smss, csrss and the first svchost stay; the others may be made to exit
      users.push(this.addProcess(this.templateProcess(tpl, this.freshPid(), parent, kernel), i >= 4));
    }
    const nSystem = Math.max(2, Math.round(o.threads * 0.15));
    for (let i = 0; i < nSystem; i++) this.addThread(this.freshTid(2, nSystem > 200 ? 0xffff : 0xff), this.system, rng.pick(SYSTEM_BASE_PRIORITIES), '', false);
    const counts = users.map(() => 1);
    for (let rest = o.threads - nSystem - users.length; rest > 0; rest--) counts[rng.int(0, users.length - 1)]!++;
    users.forEach((p, i) => {
      const tpl = TEMPLATES[i % TEMPLATES.length]!;
      for (let k = 0; k < counts[i]!; k++) {
        let name = '';
        if (tpl.names && k < tpl.names.length) name = tpl.names[k]!;
        else if (!p.kernel && rng.chance(0.3)) name = this.newName();
        const base = p.kernel ? rng.pick(SYSTEM_BASE_PRIORITIES) : rng.pick(USER_BASE_PRIORITIES);
        this.addThread(this.freshTid(), p, base, name, false);
      }
    });
    this.rundownThread = this.system.live[0]!;
    // one thread running per CPU, the others waiting
    const all: RThread[] = [];
    for (const p of this.procs.values()) for (const th of p.live) all.push(th);
    for (let i = all.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    all.forEach((th, i) => {
      if (i < this.nCpus) {
        th.state = RUNNING;
        this.cpus[i]!.cur = th;
      } else this.toPool(th);
    });
  }

  /** the start or end rundown on CPU 0: per process its Process DCStart and Thread DCStarts (DCEnd: the
   *  Thread DCEnds, then the Process DCEnd); the idle thread (tid 0) once per CPU */
  private rundown(opcode: 'dcStart' | 'dcEnd'): void {
    const hdr = { tid: this.rundownThread.tid, pid: 4 };
    for (const p of this.procs.values()) {
      if (opcode === 'dcStart') this.out.push(this.processSpec('dcStart', p, 0, this.stamp(this.t + 1)));
      if (p === this.idle) {
        for (let c = 0; c < this.nCpus; c++) this.out.push(this.idleThreadSpec(opcode, c, this.stamp(this.t + 1)));
      } else {
        for (const th of p.live) this.out.push(this.threadSpec(opcode, th, 0, this.stamp(this.t + 1), hdr.tid, hdr.pid));
      }
      if (opcode === 'dcEnd') this.out.push(this.processSpec('dcEnd', p, 0, this.stamp(this.t + 1)));
    }
  }

  // ---- event builders

  private threadSpec(opcode: ThreadOpcode, th: RThread, cpu: number, ts: bigint, headerTid: number, headerPid: number): ThreadSpec {
    const e: ThreadSpec = {
      kind: 'thread', cpu, timestamp: ts, opcode, version: 3, header: this.systemHeader, headerThreadId: headerTid, headerProcessId: headerPid,
      processId: th.proc.pid, threadId: th.tid, stackBase: th.stackBase, stackLimit: th.stackBase - 0x6000n,
      userStackBase: th.userStackBase, userStackLimit: th.userStackBase === 0n ? 0n : th.userStackBase - 0x3000n,
      affinity: (1n << BigInt(this.nCpus)) - 1n, win32StartAddr: th.win32StartAddr, tebBase: th.tebBase, subProcessTag: 0,
      basePriority: th.base, pagePriority: 5, ioPriority: 2, threadFlags: 0,
    };
    // v3: names in DCStart, DCEnd and End, none in Start (as on 18362+)
    if (opcode !== 'start') e.name = th.name;
    return e;
  }

  private idleThreadSpec(opcode: ThreadOpcode, cpu: number, ts: bigint): ThreadSpec {
    const stack = (this.ptr === 8 ? 0xfffff80245060000n : 0x82460000n) + BigInt(cpu) * 0x10000n;
    return {
      kind: 'thread', cpu: 0, timestamp: ts, opcode, version: 3, header: this.systemHeader, headerThreadId: 0, headerProcessId: 0,
      processId: 0, threadId: 0, stackBase: stack + 0x6000n, stackLimit: stack, affinity: 1n << BigInt(cpu),
      win32StartAddr: this.ptr === 8 ? 0xfffff8024266ffd0n : 0x8266ffd0n, basePriority: 0, pagePriority: 5, ioPriority: 0, name: '',
    };
  }

  private processSpec(opcode: ProcessOpcode, p: RProcess, cpu: number, ts: bigint, header?: RThread): ProcessSpec {
    const e: ProcessSpec = {
      kind: 'process', cpu, timestamp: ts, opcode, version: 4,
      header: opcode === 'start' || opcode === 'end' ? this.systemHeader : this.perfinfoHeader,
      uniqueProcessKey: p.key, processId: p.pid, parentId: p.parentId, sessionId: p.session,
      exitStatus: opcode === 'end' ? p.exitStatus : p === this.idle ? 0 : F.STATUS_STILL_ACTIVE,
      directoryTableBase: p.dtb, flags: p.flags, userSid: p.sid, imageFileName: p.image, commandLine: p.cmd,
      packageFullName: p.packageFullName, applicationId: p.applicationId,
    };
    if (header) {
      e.headerThreadId = header.tid;
      e.headerProcessId = header.proc.pid;
    }
    return e;
  }

  private setName(cpu: number, caller: RThread, target: RThread, name: string): void {
    target.name = name;
    this.out.push({
      kind: 'setThreadName', cpu, timestamp: this.stamp(this.t + 1), header: this.perfinfoHeader, headerThreadId: caller.tid,
      headerProcessId: caller.proc.pid, processId: target.proc.pid, threadId: target.tid, name,
    });
  }

  // ---- pools and the ready queue

  private toPool(th: RThread): void {
    th.state = WAITING;
    const pool = this.pools[th.pool]!;
    th.slot = pool.length;
    pool.push(th);
  }

  private fromPool(th: RThread): void {
    const pool = this.pools[th.pool]!;
    const last = pool.pop()!;
    if (last !== th) {
      pool[th.slot] = last;
      last.slot = th.slot;
    }
    th.slot = -1;
  }

  /** a waiting thread to wake: short-lived ones first, then the hot ones */
  private pickWaiting(): RThread | null {
    const r = this.rng.next() % 100;
    const order = r < 40 ? [POOL_SHORT, POOL_HOT, POOL_COLD] : r < 85 ? [POOL_HOT, POOL_COLD, POOL_SHORT] : [POOL_COLD, POOL_HOT, POOL_SHORT];
    for (const k of order) {
      const pool = this.pools[k]!;
      if (pool.length > 0) return pool[this.rng.int(0, pool.length - 1)]!;
    }
    return null;
  }

  private pushReady(th: RThread): void {
    th.state = READY;
    this.readyQueue.push(th);
  }

  private takeReady(): RThread | null {
    if (this.readyHead >= this.readyQueue.length) return null;
    const th = this.readyQueue[this.readyHead++]!;
    if (this.readyHead > 1024 && this.readyHead * 2 > this.readyQueue.length) {
      this.readyQueue.splice(0, this.readyHead);
      this.readyHead = 0;
    }
    return th;
  }

  /** Makes waiting thread w ready by a ReadyThread event on CPU c (readying thread: c's running thread, or a DPC). */
  private ready(c: number, w: RThread, isNew: boolean): void {
    const rng = this.rng;
    const cur = this.cpus[c]!.cur;
    if (w.slot >= 0) this.fromPool(w);
    readyAdjust(rng, w, isNew, this.adjust);
    const { reason, inc } = this.adjust;
    const flags = readyFlags(rng, cur !== null);
    this.out.push({
      kind: 'readyThread', cpu: c, timestamp: this.stamp(this.t + 1), header: this.perfinfoHeader, headerThreadId: cur ? cur.tid : 0,
      headerProcessId: cur ? cur.proc.pid : 0, threadId: w.tid, adjustReason: reason, adjustIncrement: inc, flags,
    });
    this.pushReady(w);
    // an idle CPU picks it up soon
    for (const cpu of this.cpus) {
      if (cpu.cur === null) {
        const soon = this.t + rng.int(5, 80);
        if (cpu.next > soon) cpu.next = soon;
        break;
      }
    }
  }

  /** Switches CPU c from its running thread (leaving in state/wait reason) to `nw` (null: idle). */
  private switchTo(c: number, nw: RThread | null, outState: number, outWr: number): void {
    const rng = this.rng;
    const cpu = this.cpus[c]!;
    const old = cpu.cur;
    const ts = this.stamp(this.t + rng.int(1, 20));
    const tn = this.t;
    const waitTicks = nw ? Math.min(0xffffffff, Math.floor((tn - nw.lastOut) / this.tick)) : 0;
    if (cpu.encoding === 'cswitch') {
      const waitMode = old && outState === L.THREAD_STATE_WAITING && USER_MODE_WAITS.has(outWr) ? 1 : 0;
      this.out.push({
        kind: 'cswitch', cpu: c, timestamp: ts, version: 4, newThreadId: nw ? nw.tid : 0, oldThreadId: old ? old.tid : 0,
        newThreadPriority: nw ? nw.prio : 0, oldThreadPriority: old ? old.prio : 0, previousCState: old ? 0 : rng.int(0, 2),
        newThreadPriorityDecrement: 0, oldThreadWaitReason: old ? outWr : 0, oldThreadWaitMode: waitMode | (rng.int(0, 3) << 1),
        oldThreadState: old ? outState : KTHREAD_RUNNING, oldThreadIdealProcessor: old ? old.ideal : c, newThreadWaitTime: waitTicks,
        oldThreadRemainingQuantum: old ? rng.int(-50_000, 2_000_000) : 0,
      });
    } else {
      this.out.push({
        kind: 'compactSwitch', cpu: c, timestamp: ts, oldThreadId: old ? old.tid : 0, oldThreadPriority: old ? old.prio : 0,
        oldThreadBasePriority: old ? old.base : 0, oldThreadState: old ? outState : 0, oldThreadWaitReason: old ? outWr : 0,
        newThreadWaitTime: waitTicks, header: this.perfinfoHeader,
      });
    }
    if (old) {
      old.lastOut = tn;
      if (outState === KTHREAD_TERMINATED) old.state = DEAD;
      else if (outState === L.THREAD_STATE_WAITING) this.toPool(old);
      else this.pushReady(old);
    }
    if (nw) {
      nw.state = RUNNING;
      if (nw.short) nw.slices--;
    }
    cpu.cur = nw;
  }

  /** the next thread for CPU c: the ready queue's head, else often a waiting thread readied by c itself */
  private nextThread(c: number): RThread | null {
    const q = this.takeReady();
    if (q) return q;
    if (this.rng.chance(0.5)) {
      const w = this.pickWaiting();
      if (w) {
        this.ready(c, w, false);
        this.readyQueue.pop();
        return w;
      }
    }
    return null;
  }

  private blockReason(): number {
    let wr: number;
    do wr = this.rng.pick(WAIT_REASONS);
    while (wr >= this.bias);
    return wr;
  }

  // ---- lifecycle

  private createThread(c: number, creator: RThread, proc: RProcess, short: boolean, name: string): RThread {
    const rng = this.rng;
    const th = this.addThread(this.freshTid(), proc, rng.pick(USER_BASE_PRIORITIES), '', short);
    this.out.push(this.threadSpec('start', th, c, this.stamp(this.t + 1), creator.tid, creator.proc.pid));
    if (name !== '') this.setName(c, creator, th, name);
    return th;
  }

  /** A new process (Process Start, Thread Starts) in place of an older one, which is made to exit: the
   *  numbers of processes and threads stay about constant. */
  private createProcess(c: number, creator: RThread): void {
    const rng = this.rng;
    let threads = rng.int(1, 4);
    if (this.procs.size >= this.targetProcesses) {
      for (let tries = 0; tries < 8; tries++) {
        const victim = this.churnable[rng.int(0, this.churnable.length - 1)]!;
        if (victim === creator.proc) continue;
        threads = Math.min(64, Math.max(1, victim.live.length));
        this.doom(c, victim);
        break;
      }
    }
    const tpl = rng.pick(CHURN_TEMPLATES);
    const p = this.addProcess(this.templateProcess(tpl, this.freshPid(), creator.proc.pid, false), true);
    this.out.push(this.processSpec('start', p, c, this.stamp(this.t + 1), creator));
    for (let k = 0; k < threads; k++) {
      const name = tpl.names && k < tpl.names.length ? tpl.names[k]! : rng.chance(0.3) ? this.newName() : '';
      const th = this.createThread(c, creator, p, false, name);
      if (k === 0) this.ready(c, th, true);
      else this.toPool(th);
    }
  }

  /** Process p is made to exit: each of its threads exits the next time it runs (waiting ones are readied). */
  private doom(c: number, p: RProcess): void {
    p.doomed = true;
    p.exitStatus = this.rng.pick(EXIT_STATUSES);
    const last = this.churnable.pop()!;
    if (last !== p) {
      this.churnable[p.churnSlot] = last;
      last.churnSlot = p.churnSlot;
    }
    p.churnSlot = -1;
    for (const th of p.live) {
      th.exiting = true;
      if (th.state === WAITING) this.ready(c, th, false);
    }
  }

  /** The running thread of CPU c exits: Thread End (+ Process End after the last thread), its final switch-out. */
  private exit(c: number, th: RThread): void {
    this.out.push(this.threadSpec('end', th, c, this.stamp(this.t + 1), th.tid, th.proc.pid));
    const p = th.proc;
    p.live.splice(p.live.indexOf(th), 1);
    this.liveTids.delete(th.tid);
    this.liveThreads--;
    if (p.live.length === 0) {
      // only a process made to exit loses its last thread (its long-lived threads exit only then)
      this.out.push(this.processSpec('end', p, c, this.stamp(this.t + 1), th));
      this.procs.delete(p.pid);
    }
    this.switchTo(c, this.nextThread(c), KTHREAD_TERMINATED, WR_TERMINATED);
  }

  // ---- events beside the scheduling

  private extras(c: number, cur: RThread | null): void {
    const rng = this.rng;
    if (cur && rng.chance(P_SPINLOCK)) {
      const ts = this.stamp(this.t + 1);
      const cycles = Number(ts) * 300;
      const hold = rng.int(20, 20_000);
      const contended = rng.chance(0.3);
      this.out.push({
        kind: 'spinlock', cpu: c, timestamp: ts, header: this.perfinfoHeader, spinLockAddress: rng.pick(this.spinLocks),
        callerAddress: this.kernelAddr() + BigInt(rng.int(0, 0xfff)), acquireTime: BigInt(cycles - hold), releaseTime: BigInt(cycles),
        waitTimeInCycles: contended ? rng.int(1, 100_000) : 0, spinCount: contended ? rng.int(1, 5000) : 0, threadId: cur.tid,
        interruptCount: rng.chance(0.9) ? 0 : rng.int(1, 3), irql: rng.pick([0, 2, 2, 2, 5, 12]), acquireDepth: rng.int(1, 3),
        acquireMode: rng.int(0, 4), executeDpc: rng.chance(0.2), executeIsr: rng.chance(0.05),
      });
    }
    if (cur && rng.chance(P_PROVIDER)) this.providerEvent(c, cur);
    if (rng.chance(P_KERNEL_NOISE)) this.kernelNoise(c, cur);
  }

  private providerEvent(c: number, cur: RThread): void {
    const rng = this.rng;
    const x = rng.float();
    const cum = this.providerCum;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    const k = this.providerKinds[lo]!;
    const e: RawEventSpec = {
      kind: 'raw', cpu: c, timestamp: this.stamp(this.t + 1), headerType: this.ptr === 8 ? 'EVENT_HEADER64' : 'EVENT_HEADER32',
      payload: this.poolBytes(rng.int(k.minSize, k.maxSize)), threadId: cur.tid, processId: cur.proc.pid, provider: k.provider,
      eventId: k.eventId, version: k.version, opcode: k.opcode, task: k.task, level: k.level, channel: k.channel, keyword: k.keyword,
    };
    if (k.items) e.extendedItems = k.items;
    this.out.push(e);
  }

  private kernelNoise(c: number, cur: RThread | null): void {
    const rng = this.rng;
    const k = rng.pick(this.kernelKinds);
    const e: RawEventSpec = {
      kind: 'raw', cpu: c, timestamp: this.stamp(this.t + 1), headerType: k.headerType, hookId: k.hookId, version: k.version,
      payload: this.poolBytes(rng.int(k.minSize, k.maxSize)), threadId: cur ? cur.tid : 0, processId: cur ? cur.proc.pid : 0,
    };
    if (k.provider !== undefined) {
      e.provider = k.provider;
      e.classType = k.classType;
      e.level = 4;
      if (k.headerType.startsWith('INSTANCE')) {
        e.instanceId = rng.int(1, 1000);
        e.parentInstanceId = 0;
        e.parentGuid = k.provider;
      }
    }
    this.out.push(e);
  }

  /** SampledProfile: InstructionPointer, ThreadId, Count (1), Reserved */
  private sample(c: number): void {
    const cur = this.cpus[c]!.cur;
    const P = this.ptr;
    const payload = new Uint8Array(P + 8);
    const dv = new DataView(payload.buffer);
    const ip = !cur ? (P === 8 ? 0xfffff8024266ffd0n : 0x8266ffd0n) + BigInt(this.rng.int(0, 0x40))
      : cur.proc.kernel || this.rng.chance(0.35) ? this.kernelAddr() + BigInt(this.rng.int(0, 0xfff)) : this.userAddr();
    if (P === 8) dv.setBigUint64(0, ip, true);
    else dv.setUint32(0, Number(ip), true);
    dv.setUint32(P, cur ? cur.tid : 0, true);
    dv.setUint16(P + 4, 1, true);
    this.out.push({
      kind: 'raw', cpu: c, timestamp: this.stamp(this.t + 1), headerType: this.perfinfoHeader, hookId: HOOK_SAMPLED_PROFILE, version: 2, payload,
    });
  }

  // ---- the scheduler

  /** the next due action of the CPU due first: a SampledProfile or a scheduler step */
  private advance(): void {
    let c = 0;
    let due = Infinity;
    for (let i = 0; i < this.cpus.length; i++) {
      const cpu = this.cpus[i]!;
      const d = Math.min(cpu.next, cpu.nextSample);
      if (d < due) {
        due = d;
        c = i;
      }
    }
    const cpu = this.cpus[c]!;
    if (due > this.t) this.t = due - 1;
    if (cpu.nextSample <= cpu.next) {
      this.sample(c);
      cpu.nextSample += SAMPLE_INTERVAL;
      return;
    }
    this.step(c);
    cpu.next = Math.max(cpu.next, this.t) + stepGap(this.rng);
  }

  private step(c: number): void {
    const rng = this.rng;
    const cpu = this.cpus[c]!;
    const cur = cpu.cur;
    this.extras(c, cur);
    if (!cur) {
      let nw = this.takeReady();
      if (!nw && rng.chance(0.7)) nw = this.nextThread(c);
      if (nw) this.switchTo(c, nw, 0, 0);
      return;
    }
    if (cur.exiting || (cur.short && cur.slices <= 0)) {
      this.exit(c, cur);
      return;
    }
    if (!cur.proc.kernel && !cur.proc.doomed) {
      if (rng.chance(P_CREATE_THREAD)) {
        const th = this.createThread(c, cur, cur.proc, true, rng.chance(P_NAME_NEW) ? this.newName() : '');
        this.ready(c, th, true);
      }
      if (rng.chance(P_CREATE_PROCESS)) this.createProcess(c, cur);
      if (rng.chance(P_RENAME)) this.setName(c, cur, cur, this.newName());
    }
    const r = rng.float();
    if (r < P_BLOCK) {
      this.switchTo(c, this.nextThread(c), L.THREAD_STATE_WAITING, this.blockReason());
    } else if (r < P_BLOCK + P_WAKE) {
      const w = this.pickWaiting();
      if (w) {
        this.ready(c, w, false);
        if (w.prio > cur.prio && rng.chance(0.5) && this.readyQueue[this.readyQueue.length - 1] === w) {
          this.readyQueue.pop();
          this.switchTo(c, w, rng.chance(0.85) ? KTHREAD_READY : KTHREAD_DEFERRED_READY, WR_PREEMPTED);
        }
      }
    } else {
      const nw = this.takeReady();
      if (nw) {
        this.switchTo(c, nw, KTHREAD_READY, rng.chance(0.15) ? WR_YIELD_EXECUTION : WR_QUANTUM_END);
        cur.prio = Math.max(cur.base, cur.prio - 1);
      } else if (cur.prio > cur.base) cur.prio--;
    }
  }
}

// ---------------------------------------------------------------------------------------------

interface Normalized {
  seed: number;
  cpus: number;
  switches: SwitchEncoding | 'mixed';
  processes: number;
  threads: number;
  bufferSize: number;
  trace: TraceOptions;
}

function realisticSpec(opts: RealisticTraceOptions): SourceSpec {
  const { cpus, options } = generatorSession(opts, 'C:\\etw-decode\\realistic.etl');
  const int = (v: unknown, lo: number, hi: number, name: string, d: number): number => {
    if (v === undefined) return d;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${name}: ${String(v)} is not an integer in [${lo}, ${hi}]`);
    return v;
  };
  const switches = opts.switches ?? 'compact';
  if (switches !== 'compact' && switches !== 'cswitch' && switches !== 'mixed') {
    throw new RangeError(`switches: ${String(switches)} is not 'compact', 'cswitch' or 'mixed'`);
  }
  const processes = int(opts.processes, 5, 2000, 'processes', 100);
  const threads = int(opts.threads, processes + cpus, 20_000, 'threads', Math.max(1200, processes + cpus));
  const trace = { ...options, groupMasks: [GROUP_MASK0, DEFAULT_GROUP_MASK1 | PERF_DISPATCHER_MASK1 | PERF_PROFILE_MASK1, 0, 0, 0, 0, 0, 0] };
  const o: Normalized = { seed: opts.seed, cpus, switches, processes, threads, bufferSize: options.bufferSize ?? 0x10000, trace };
  return {
    seed: opts.seed,
    targetBytes: opts.targetBytes,
    cpus,
    options: trace,
    make: (bias, ptr) => new RealisticEventSource(o, bias, ptr),
    // the start rundown fills the first buffers of CPU 0 at no time cost
    probeSkip: 4,
    probeBuffers: 32,
  };
}

/**
 * A realistic deterministic trace of about targetBytes, in memory (see the file comment for what it holds).
 * Same bytes as generateRealisticTraceChunks.
 */
export function generateRealisticTrace(opts: RealisticTraceOptions): WrittenTrace {
  return generateFromSpec(realisticSpec(opts));
}

/** Streams the trace of generateRealisticTrace buffer by buffer, with bounded memory for any size. */
export function* generateRealisticTraceChunks(opts: RealisticTraceOptions): Generator<Uint8Array> {
  yield* streamFromSpec(realisticSpec(opts));
}
