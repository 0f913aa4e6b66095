// The fenced code blocks of a Markdown file, and a shell that runs their lines one at a time as a user
// types them (each line in bash, the directory a `cd` left carried to the next line), for test/readme.test.ts.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface Block {
  /** the info string after the opening fence: sh, ts, text, … */
  lang: string;
  /** 1-based line of the file that holds lines[0] */
  line: number;
  lines: string[];
}

/** Every fenced block (``` fences at the start of a line) of `markdown`, in order. */
export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let open: Block | null = null;
  lines.forEach((text, i) => {
    const fence = /^```(\S*)\s*$/.exec(text);
    if (!fence) {
      open?.lines.push(text);
    } else if (open) {
      blocks.push(open);
      open = null;
    } else {
      open = { lang: fence[1]!, line: i + 2, lines: [] };
    }
  });
  if (open) throw new Error(`unclosed code block at line ${(open as Block).line - 1}`);
  return blocks;
}

/** A shell line without its trailing `# comment` (what the line runs). */
export function commandOf(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return line.slice(0, i).trim();
    }
  }
  return line.trim();
}

/** The environment of the commands: this process's, without what an enclosing `npm run` set for its own project. */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return { ...env, NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false', ...extra };
}

export interface LineResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** the working directory after the line (a `cd` in it moves the next line) */
  cwd: string;
}

/** Runs one line in bash in `cwd`; resolves when it ends or after `timeoutMs` (then killed: status null). */
export function runLine(line: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number, scratch: string): Promise<LineResult> {
  const cwdFile = join(scratch, `.cwd-${process.pid}`);
  const script = `${line}\nstatus=$?\npwd > '${cwdFile}'\nexit $status\n`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => killGroup(child.pid), timeoutMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      let after = cwd;
      try {
        after = readFileSync(cwdFile, 'utf8').trim() || cwd;
        rmSync(cwdFile, { force: true });
      } catch {
        // killed before it wrote the directory
      }
      resolve({ status, stdout, stderr, cwd: after });
    });
  });
}

/** Ends a process group this test started (the line's bash and everything it ran). */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

export interface Served {
  url: string;
  output: string;
  /** stops the server's process group and resolves when it is gone */
  stop(): Promise<void>;
}

/** Starts a line that serves forever and resolves once it printed an http:// URL (rejects if it ends first). */
export function startServer(line: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let done = false;
    const exited = new Promise<void>((r) => child.on('close', () => r()));
    const stop = async () => {
      killGroup(child.pid);
      await exited;
    };
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      void stop().then(() => reject(new Error(`no URL after ${timeoutMs} ms:\n${output}`)));
    }, timeoutMs);
    const onData = (s: string) => {
      output += s;
      const url = /https?:\/\/[^\s]+/.exec(output);
      if (url && !done) {
        done = true;
        clearTimeout(timer);
        resolve({ url: url[0], output, stop });
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.on('error', reject);
    child.on('close', (status) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`ended (${status}) before printing a URL:\n${output}`));
    });
  });
}
