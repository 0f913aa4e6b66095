// Machine and checkout facts recorded with every result file, so figures are compared on like machines.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  /** logical processors visible to Node */
  cores: number;
  /** nominal MHz of the first core as reported by the OS (0 when unknown) */
  mhz: number;
  totalMemoryGiB: number;
  platform: string;
  arch: string;
  node: string;
  v8: string;
  /** 1-minute load average when the run started (other tenants make a 2-core VM noisy) */
  loadAverage: number;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    mhz: cpus[0]?.speed ?? 0,
    totalMemoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.type()} ${os.release()}`,
    arch: process.arch,
    node: process.version,
    v8: process.versions.v8,
    loadAverage: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}

export interface GitInfo {
  commit: string | null;
  /** uncommitted changes under assembly/ src/ bench/ (the code being measured) */
  dirty: boolean | null;
}

export function gitInfo(cwd: string): GitInfo {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'assembly', 'src', 'bench'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return { commit, dirty: status.trim().length > 0 };
  } catch {
    return { commit: null, dirty: null };
  }
}

export function describeMachine(m: MachineInfo): string {
  return `${m.cpuModel}, ${m.cores} cores${m.mhz ? ` @ ${m.mhz} MHz` : ''}, ${m.totalMemoryGiB} GiB RAM, ${m.platform} ${m.arch}, Node ${m.node} (V8 ${m.v8}), load ${m.loadAverage}`;
}
