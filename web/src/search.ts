// The page's search box rule, shared by the page (CPU tables, timeline, thread lanes) and the decoding
// worker (the flame graph): a process by its id or a part of its image name, a thread by its id or name.

/** Does a process (id, image) match the search `q` (lower case): its id exactly, or a part of its image name? */
export function processMatches(q: string, pid: number | null, image: string | null): boolean {
  return q === '' || (pid !== null && String(pid) === q) || (image !== null && image.toLowerCase().includes(q));
}
