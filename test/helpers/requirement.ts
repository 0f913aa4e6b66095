// Tests that need something the repository does not hold (a Chromium, the real-file corpus): without it they
// are skipped with one line saying how to enable them — except under CI=true, where their file fails.
// Call it once at the top of a test file and gate the tests with `describe.skipIf(!enabled)` / `test.skipIf`.

/** Whether to run the tests that need it: true when `present`; else prints `missingLine` once, or throws under CI=true. */
export function requirementMet(present: boolean, missingLine: string, what: string): boolean {
  if (present) return true;
  if (process.env.CI === 'true') throw new Error(`${missingLine} (CI=true: ${what} must run)`);
  console.log(missingLine);
  return false;
}
