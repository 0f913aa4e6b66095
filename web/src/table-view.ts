// A sortable table: header cells are buttons (keyboard: Tab to a header, Enter/Space to sort, again to
// reverse), rows rendered up to `limit` with a "show all" button, numbers right-aligned.
import { esc } from './format.js';

export interface Column<R> {
  key: string;
  label: string;
  /** tooltip of the header */
  title?: string;
  /** cell text (HTML-escaped by the table) */
  text(r: R): string;
  /** sort key; absent: not sortable */
  sort?(r: R): number | bigint | string | null;
  numeric?: boolean;
  /** optional HTML before the text (a colour chip) */
  prefix?(r: R): string;
}

export interface TableOptions<R> {
  columns: Column<R>[];
  rows: R[];
  /** initial sort */
  sortKey: string;
  descending?: boolean;
  limit?: number;
  /** caption for screen readers */
  caption: string;
  /** the `data-testid` of the table */
  testId?: string;
  empty?: string;
}

function compare(a: number | bigint | string | null, b: number | bigint | string | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (typeof a === 'string' || typeof b === 'string') return String(a).localeCompare(String(b));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Renders into `host`; returns a function giving the rows in their shown order (for the CSV of the view). */
export function renderTable<R>(host: HTMLElement, o: TableOptions<R>): () => R[] {
  let key = o.sortKey;
  let desc = o.descending ?? true;
  let all = false;
  let sorted: R[] = [];
  const limit = o.limit ?? 50;

  const draw = () => {
    const col = o.columns.find((c) => c.key === key)!;
    sorted = [...o.rows].sort((x, y) => {
      const c = compare(col.sort!(x), col.sort!(y));
      return desc ? -c : c;
    });
    const shown = all ? sorted : sorted.slice(0, limit);
    const head = o.columns
      .map((c) => {
        const active = c.key === key;
        const aria = active ? ` aria-sort="${desc ? 'descending' : 'ascending'}"` : '';
        const cls = c.numeric ? ' class="num"' : '';
        const inner = c.sort
          ? `<button type="button" class="sort${active ? ' active' : ''}" data-key="${c.key}"${c.title ? ` title="${esc(c.title)}"` : ''}>${esc(c.label)}<span class="arrow" aria-hidden="true">${active ? (desc ? '▼' : '▲') : ''}</span></button>`
          : esc(c.label);
        return `<th scope="col"${cls}${aria}>${inner}</th>`;
      })
      .join('');
    const body = shown.length
      ? shown
          .map(
            (r) =>
              `<tr>${o.columns.map((c) => `<td${c.numeric ? ' class="num"' : ''}>${c.prefix ? c.prefix(r) : ''}${esc(c.text(r))}</td>`).join('')}</tr>`,
          )
          .join('')
      : `<tr><td colspan="${o.columns.length}" class="empty">${esc(o.empty ?? 'nothing to show')}</td></tr>`;
    const more =
      sorted.length > limit
        ? `<button type="button" class="link more">${all ? `show the first ${limit}` : `show all ${sorted.length} rows`}</button>`
        : '';
    host.innerHTML = `<div class="table-scroll"><table${o.testId ? ` data-testid="${o.testId}"` : ''}><caption class="sr-only">${esc(o.caption)}</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>${more}`;
    for (const b of host.querySelectorAll<HTMLButtonElement>('button.sort')) {
      b.addEventListener('click', () => {
        if (b.dataset.key === key) desc = !desc;
        else {
          key = b.dataset.key!;
          const c = o.columns.find((x) => x.key === key)!;
          desc = !!c.numeric;
        }
        draw();
        host.querySelector<HTMLButtonElement>(`button.sort[data-key="${key}"]`)?.focus();
      });
    }
    host.querySelector<HTMLButtonElement>('button.more')?.addEventListener('click', () => {
      all = !all;
      draw();
    });
  };
  draw();
  return () => sorted;
}
