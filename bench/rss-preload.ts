// Preloaded (`node --import`) into the commands bench/e2e.ts times when /usr/bin/time is missing: at exit,
// writes the process's peak RSS (VmHWM of /proc/self/status; process.resourceUsage().maxRSS where /proc is
// missing, which Linux would carry over from the parent across fork + exec) and its CPU seconds (every
// thread) as JSON to the file named by ETW_BENCH_RSS_OUT.
import { readFileSync, writeFileSync } from 'node:fs';

const out = process.env.ETW_BENCH_RSS_OUT;
if (out) {
  process.on('exit', () => {
    let rss = process.resourceUsage().maxRSS * 1024;
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
      if (m) rss = Number(m[1]) * 1024;
    } catch {
      // no /proc: maxRSS
    }
    const u = process.cpuUsage();
    writeFileSync(out, JSON.stringify({ rss, cpu: (u.user + u.system) / 1e6 }));
  });
}
