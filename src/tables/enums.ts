// Names of the enumerations found in the tables (docs/format.md §C.5 KTHREAD_STATE, C.6 KWAIT_REASON,
// C.8 KPROCESSOR_MODE, E.3 spin-lock AcquireMode) and of the row sources.

export const THREAD_STATES = [
  'Initialized', 'Ready', 'Running', 'Standby', 'Terminated', 'Waiting', 'Transition', 'DeferredReady',
  'GateWaitObsolete', 'WaitingForProcessInSwap',
] as const;

export const WAIT_REASONS = [
  'Executive', 'FreePage', 'PageIn', 'PoolAllocation', 'DelayExecution', 'Suspended', 'UserRequest',
  'WrExecutive', 'WrFreePage', 'WrPageIn', 'WrPoolAllocation', 'WrDelayExecution', 'WrSuspended',
  'WrUserRequest', 'WrEventPair', 'WrQueue', 'WrLpcReceive', 'WrLpcReply', 'WrVirtualMemory', 'WrPageOut',
  'WrRendezvous', 'WrKeyedEvent', 'WrTerminated', 'WrProcessInSwap', 'WrCpuRateControl', 'WrCalloutStack',
  'WrKernel', 'WrResource', 'WrPushLock', 'WrMutex', 'WrQuantumEnd', 'WrDispatchInt', 'WrPreempted',
  'WrYieldExecution', 'WrFastMutex', 'WrGuardedMutex', 'WrRundown', 'WrAlertByThreadId', 'WrDeferredPreempt',
  'WrPhysicalFault', 'WrIoRing', 'WrMdlCache', 'WrRcu',
] as const;

export const WAIT_MODES = ['KernelMode', 'UserMode'] as const;

export const ACQUIRE_MODES = [
  'SpinLock', 'QueuedSpinLock', 'ExecutiveSpinLockShared', 'ExecutiveSpinLockExclusive',
  'ExecutiveSpinLockSharedToExclusive',
] as const;

export const ROW_SOURCES = ['CSwitch', 'IdleShort', 'Idle', 'Lite', 'Full'] as const;

/** ReadyThread AdjustReason (docs/format.md §F.4) */
export const ADJUST_REASONS = ['None', 'Unwait', 'Boost'] as const;

function sparse(names: Record<number, string>): readonly string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(names)) out[Number(k)] = v;
  return out;
}
/** Thread event opcodes (the low byte of the HookId, docs/format.md §F.1) */
export const THREAD_EVENT_OPCODES = sparse({ 1: 'Start', 2: 'End', 3: 'DCStart', 4: 'DCEnd', 72: 'SetName' });
/** Process event opcodes */
export const PROCESS_EVENT_OPCODES = sparse({ 1: 'Start', 2: 'End', 3: 'DCStart', 4: 'DCEnd', 39: 'Defunct' });
/** Image event opcodes (docs/format.md §G.2) */
export const IMAGE_EVENT_OPCODES = sparse({ 2: 'Unload', 3: 'DCStart', 4: 'DCEnd', 10: 'Load' });
/** StackWalk event opcodes (docs/format.md §H.1) */
export const STACK_EVENT_OPCODES = sparse({ 32: 'Stack', 34: 'KeyCreate', 35: 'KeyDelete', 36: 'KeyRundown', 37: 'StackKeyKernel', 38: 'StackKeyUser' });
/** SampledProfileInterval opcodes (docs/format.md §G.4) */
export const SAMPLE_INTERVAL_EVENT_OPCODES = sparse({ 72: 'SetInterval', 73: 'DCStart', 74: 'DCEnd' });

/** Every enumeration a table column can name (schema/tables.mjs, 4th field of a column). */
export const ENUMS: Record<string, readonly string[]> = {
  threadState: THREAD_STATES,
  waitReason: WAIT_REASONS,
  waitMode: WAIT_MODES,
  acquireMode: ACQUIRE_MODES,
  rowSource: ROW_SOURCES,
  adjustReason: ADJUST_REASONS,
  threadEvent: THREAD_EVENT_OPCODES,
  processEvent: PROCESS_EVENT_OPCODES,
  imageEvent: IMAGE_EVENT_OPCODES,
  stackEvent: STACK_EVENT_OPCODES,
  sampleIntervalEvent: SAMPLE_INTERVAL_EVENT_OPCODES,
};

export function nameOf(table: readonly string[], value: number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return table[value] ?? `Unknown(${value})`;
}

export const threadStateName = (v: number | null | undefined) => nameOf(THREAD_STATES, v);
export const waitReasonName = (v: number | null | undefined) => nameOf(WAIT_REASONS, v);
export const waitModeName = (v: number | null | undefined) => nameOf(WAIT_MODES, v);
export const acquireModeName = (v: number | null | undefined) => nameOf(ACQUIRE_MODES, v);
export const rowSourceName = (v: number | null | undefined) => nameOf(ROW_SOURCES, v);
