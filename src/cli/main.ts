// etw-decode command line: builds the program from its commands (one file each: summary.ts, cpu.ts,
// dump.ts, spinlocks.ts, convert.ts; their options from options.ts), wires the decode (worker_threads),
// runs the command, and turns every expected failure into one line on stderr and an exit code (README §
// Command line); only a bug prints a stack trace.
import { Command } from 'commander';
import { EtlError } from '../errors.js';
import { registerParallelHost } from '../parallel/host.js';
import { nodeHost } from '../parallel/node-host.js';
import { VERSION } from '../version.js';
import { addConvertCommand } from './convert.js';
import { addCpuCommand } from './cpu.js';
import { addDumpCommand } from './dump.js';
import { CliError, EXIT, note, OutputClosed, openInput, prepareCommandLine, type CommandContext, type Input } from './io.js';
import { addSpinlocksCommand } from './spinlocks.js';
import { addSummaryCommand } from './summary.js';

let streamsGuarded = false;
/** An 'error' event nobody listens to crashes Node with a stack trace: listen (each Output checks its own). */
function guardStdStreams(): void {
  if (streamsGuarded) return;
  streamsGuarded = true;
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
}

/** The program and its commands, in the order `--help` lists them. */
function buildProgram(context: CommandContext): Command {
  const program = new Command();
  program
    .name('etw-decode')
    .description('Decode Windows kernel scheduling traces (ETL): CSwitch, compact context switches and SpinLock events.')
    .version(VERSION)
    // commander's usage errors ("error: unknown command 'x'") in the form of every other error
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'etw-decode: ')) })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  prepareCommandLine(program);
  addSummaryCommand(program, context);
  addCpuCommand(program, context);
  addDumpCommand(program, context);
  addSpinlocksCommand(program, context);
  addConvertCommand(program, context);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  guardStdStreams();
  // the CLI's wiring (it imports decode/files.ts, not the node entry, to start faster): large decodes use worker_threads
  registerParallelHost(nodeHost);
  const inputs: Input[] = [];
  let exitCode: number = EXIT.ok;
  const program = buildProgram({
    input: async (arg) => {
      const i = await openInput(arg);
      inputs.push(i);
      return i;
    },
    setExit: (code) => (exitCode = code),
  });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    const err = e as { code?: string; exitCode?: number; message?: string };
    if (typeof err.code === 'string' && err.code.startsWith('commander.')) {
      // commander already printed help/version/usage errors; usage errors exit 2 (commander would say 1)
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help' ? EXIT.ok : EXIT.usage;
    }
    if (e instanceof OutputClosed) return EXIT.outputClosed; // quietly, as `cat file | head` does
    if (e instanceof CliError) {
      note(e.message);
      return e.exitCode;
    }
    if (e instanceof EtlError) {
      note(inputs.reduce((m, i) => i.describe(m), e.message));
      // an option that does not apply (a bad value, --time on a trace whose clock cannot be converted): 2
      return e.code === 'BAD_OPTION' || e.code === 'NO_CLOCK' ? EXIT.usage : EXIT.error;
    }
    note(`internal error: ${(e as Error).stack ?? String(e)}`);
    return EXIT.internal;
  } finally {
    for (const i of inputs) await i.dispose();
  }
  return exitCode;
}
