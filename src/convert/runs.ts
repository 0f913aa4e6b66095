// Who is converting what in a dataset (DIR/.staging): every conversion run writes under names that carry
// its owner (`<name>@<host>@<pid>@<random>`), holds DIR/.staging/<id>.lock while it converts trace <id>,
// and removes what dead runs left — staging trees of killed runs (SIGKILL, a crash, a power loss) go at
// the start of the next conversion into the dataset; a run stopped by SIGINT/SIGTERM removes its own at
// once (removeOwnRunFiles, from the CLI's signal handler).
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EtlError } from '../errors.js';

export const STAGING = '.staging';

/** The owner of a run: this host and process. */
export interface RunOwner {
  host: string;
  pid: number;
}

const HOST = hostname().replace(/[^A-Za-z0-9.-]+/g, '_') || 'localhost';
const SELF: RunOwner = { host: HOST, pid: process.pid };

/** `<name>@<host>@<pid>@<random>`: a name in DIR/.staging that says which run made it. */
export function ownedName(name: string): string {
  return `${name}@${HOST}@${process.pid}@${randomBytes(4).toString('hex')}`;
}

/** The owner of a name in DIR/.staging: ownedName's, or a staging tree of earlier versions (`<id>.<pid>.<random>`, this host). */
function ownerOfName(name: string): RunOwner | null {
  const m = /@([A-Za-z0-9._-]+)@(\d+)@[0-9a-f]+(?:\.[a-z]+)?$/.exec(name);
  if (m) return { host: m[1]!, pid: Number(m[2]) };
  const old = /^[^@]+-[0-9a-f]{8}\.(\d+)\.[0-9a-z]{1,6}$/.exec(name);
  return old ? { host: HOST, pid: Number(old[1]) } : null;
}

/** false only when the owner is a process of this host that has ended (another host's cannot be known). */
function isAlive(owner: RunOwner): boolean {
  if (owner.host !== HOST) return true;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH'; // EPERM: alive, another user's
  }
}

function parseOwner(text: string): RunOwner | null {
  try {
    const o = JSON.parse(text) as Partial<RunOwner>;
    return typeof o.host === 'string' && Number.isSafeInteger(o.pid) ? { host: o.host, pid: o.pid! } : null;
  } catch {
    return null;
  }
}

function lockPath(root: string, id: string): string {
  return join(root, STAGING, `${id}.lock`);
}

/** A lock file whose owner is unreadable this long after it was made belongs to a run that died making it. */
const UNREADABLE_LOCK_MS = 10_000;
const POLL_MS = 150;

/**
 * The right to convert trace `id` into the dataset at `root`: DIR/.staging/<id>.lock, holding its owner.
 * A lock of a live run on this host is waited for (then the trace is looked at again: usually that run
 * converted it); a dead run's lock is taken over; another host's lock is an error that names it.
 */
/**
 * Makes DIR/.staging. Another run may remove it when it finds it empty (removeDeadRuns, the end of a
 * conversion) at any moment, even inside a recursive mkdir (which then fails with ENOENT when the directory it
 * found existing is gone on its check): tried again then.
 */
export async function makeStaging(root: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(join(root, STAGING), { recursive: true });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 100) throw e;
    }
  }
}

export class TraceLock {
  private constructor(private readonly path: string) {}

  static async acquire(root: string, id: string): Promise<TraceLock> {
    const path = lockPath(root, id);
    await makeStaging(root);
    for (;;) {
      try {
        const fh = await open(path, 'wx');
        try {
          await fh.writeFile(JSON.stringify(SELF));
        } finally {
          await fh.close();
        }
        return new TraceLock(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
          await makeStaging(root); // .staging was removed by a run that ended
          continue;
        }
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const text = await readFile(path, 'utf8').catch(() => null);
      if (text === null) continue; // released meanwhile
      const owner = parseOwner(text);
      if (owner === null) {
        const age = Date.now() - ((await stat(path).catch(() => null))?.mtimeMs ?? Date.now());
        if (age > UNREADABLE_LOCK_MS) await takeOver(path, text);
        else await sleep(POLL_MS);
      } else if (isAlive(owner)) {
        if (owner.host !== HOST) {
          throw new EtlError(
            'WRITE_FAILED',
            `trace=${id} is being converted into ${root} by process ${owner.pid} on host ${owner.host} (${path}; delete it if that run is gone)`,
          );
        }
        await sleep(POLL_MS);
      } else await takeOver(path, text);
    }
  }

  async release(): Promise<void> {
    await rm(this.path, { force: true });
  }
}

/**
 * Removes a dead run's lock: renamed aside first (one of several runs doing this at once wins), then
 * checked to be the lock that was read — a live run's new lock taken by mistake is put back.
 */
async function takeOver(path: string, seen: string): Promise<void> {
  const aside = join(path, '..', ownedName('lock') + '.stale');
  try {
    await rename(path, aside);
  } catch {
    return; // another run took it over or it was released
  }
  const text = await readFile(aside, 'utf8').catch(() => seen);
  if (text !== seen) await rename(aside, path).catch(() => undefined);
  else await rm(aside, { force: true });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The owner of an entry of DIR/.staging: from its name, or a lock's contents. */
function ownerOfEntry(dir: string, name: string, readText: (path: string) => string | null): RunOwner | null {
  if (name.endsWith('.lock')) {
    const text = readText(join(dir, name));
    return text === null ? null : parseOwner(text);
  }
  return ownerOfName(name);
}

/**
 * Removes what runs that have ended left in DIR/.staging (their staging trees with partial files, their
 * locks and temporary manifests); entries of live runs and of other hosts stay. Then .staging itself
 * when it is empty.
 */
export async function removeDeadRuns(root: string): Promise<void> {
  const dir = join(root, STAGING);
  const names = await readdir(dir).catch(() => [] as string[]);
  const texts = new Map<string, string | null>();
  for (const name of names.filter((n) => n.endsWith('.lock'))) texts.set(name, await readFile(join(dir, name), 'utf8').catch(() => null));
  for (const name of names) {
    const owner = ownerOfEntry(dir, name, () => texts.get(name) ?? null);
    if (owner !== null && !isAlive(owner)) await rm(join(dir, name), { recursive: true, force: true });
  }
  await rmdir(dir).catch(() => undefined); // only when empty
}

/** Synchronously removes this process's entries of DIR/.staging (a signal handler's cleanup; best effort). */
export function removeOwnRunFiles(root: string): void {
  const dir = join(root, STAGING);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const read = (p: string): string | null => {
    try {
      return readFileSync(p, 'utf8');
    } catch {
      return null;
    }
  };
  for (const name of names) {
    const owner = ownerOfEntry(dir, name, read);
    if (owner !== null && owner.host === HOST && owner.pid === process.pid) {
      try {
        rmSync(join(dir, name), { recursive: true, force: true });
      } catch {
        // the process is going away
      }
    }
  }
}
