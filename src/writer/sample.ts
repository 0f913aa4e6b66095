// The small realistic trace `npm start` decodes (samples/sample.etl, written by scripts/make-sample.mjs):
// a scheduler simulation (src/writer/schedule.ts) with its ground truth. Browser-safe: no node imports.
import { simulateSchedule } from './schedule.js';
import type { ScheduleOptions, SimulatedSchedule } from './schedule.js';
import type { WrittenTrace } from './types.js';
import { writeTrace } from './writer.js';

export interface SampleTrace extends WrittenTrace {
  /** the simulation the trace was written from, with its ground truth */
  schedule: SimulatedSchedule;
}

/** The options generateSampleTrace() passes to simulateSchedule (before `overrides`). */
export const SAMPLE_OPTIONS: Readonly<ScheduleOptions> = {
  seed: 2026,
  cpus: 4,
  processes: 10,
  threads: 50,
  duration: 6_000_000,
  switchMode: 'mixed',
  cswitchVersions: [4],
  spinlocks: 0.06,
  noise: 0.12,
  build: 19041,
  bufferSize: 0x4000,
  loggerName: 'NT Kernel Logger',
  logFileName: 'C:\\etw-decode\\sample.etl',
};

/**
 * A realistic small trace (under 300 KB): Windows 10 2004 (build 19041), 4 CPUs (0 and 2 log CSwitch v4
 * events, 1 and 3 compact switches), Idle, System and 8 other processes (Registry, smss.exe, csrss.exe,
 * svchost.exe, explorer.exe, chrome.exe, …) with 50 threads, rundowns, process/thread start and end, a reused
 * TID and PID, SetName and ReadyThread events, SpinLock events and noise events of every header kind.
 * Deterministic: the same writer version gives the same bytes.
 */
export function generateSampleTrace(overrides: Partial<ScheduleOptions> = {}): SampleTrace {
  const schedule = simulateSchedule({ ...SAMPLE_OPTIONS, ...overrides });
  return { ...writeTrace(schedule.description), schedule };
}
