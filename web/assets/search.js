// search.js: the search over every record of the runs (GET /api/search: kernels, copies and
// memsets, CUDA API calls, NVTX ranges, by name), as Perfetto's omnibox does it: the count of
// matches in the whole run ("k of N"), Enter / Shift+Enter (and the arrow buttons) step to the
// next / previous match in time order, across kinds, selecting it and bringing it into view; the
// results list (a tab of the bottom panel) gives the count per kind and per name and the matches
// from the current one on, each a link. Kernels drawn one by one that match are highlighted, the
// others dimmed; aggregated rows mark where the matches in view are. API: web/API.md.
'use strict';

// ------------------------------------------------------------------ constants

const SEARCH_DEBOUNCE = 150;  // ms between typing and the query
const SEARCH_LIST = 200;      // matches listed in the results, from the current one on
const SEARCH_NAMES = 500;     // names listed in the results
const SEARCH_MARKS = 2000;    // matches in view marked over aggregated kernel rows
const KIND_WORDS = { kernel: 'kernels', copy: 'copies', api: 'API calls', nvtx: 'NVTX ranges' };

/* interface SearchRun {    // GET /api/search of one run, without items
 *   total, by_kind {kernel, copy, api, nvtx}, nnames, names[] {kind, name, count}
 * }
 * interface Match {        // one match: where it is and what it is
 *   run, index (in its run's order), kind, id, row, depth, s, d, name
 * } */

// ------------------------------------------------------------------ state

let searchTimer = 0;

// searchTotal is the number of matches in every run.
function searchTotal() {
  return S.find.runs.reduce((a, r) => a + r.total, 0);
}

// searchSpot turns a position k among all matches (run 0's first, then run 1's) into
// [run, index in that run].
function searchSpot(k) {
  let ri = 0;
  while (ri < S.find.runs.length - 1 && k >= S.find.runs[ri].total) k -= S.find.runs[ri++].total;
  return [ri, k];
}

// searchURL is the query of run ri for the current text with the given parameters.
function searchURL(ri, extra) {
  return `api/search?run=${ri}&q=${encodeURIComponent(S.find.q)}${extra}`;
}

// ------------------------------------------------------------------ queries

// scheduleFind searches SEARCH_DEBOUNCE ms after the last key typed.
function scheduleFind() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(runFind, SEARCH_DEBOUNCE);
}

// runFind asks every run how many records match the box's text (and their names), marks the
// matching kernel launches for the drawing, and the matches in view over aggregated rows.
async function runFind() {
  const q = $('find').value.trim();
  if (q === S.find.q && S.find.runs.length) { findMarks(); return; }
  S.find = { q, runs: [], k: -1, launches: [], hits: [], current: null };
  writeHash();
  if (!q) {
    $('find-info').textContent = '';
    closeSearch();
    requestDraw();
    return;
  }
  const ql = q.toLowerCase();
  S.find.launches = S.runs.map((run) => {
    const set = new Set();
    run.launches.forEach((L, i) => { if (run.names[L[0]].toLowerCase().includes(ql)) set.add(i); });
    return set;
  });
  try {
    const res = await Promise.all(S.runs.map((r, ri) => getJSON(searchURL(ri, `&limit=0&names=${SEARCH_NAMES}`))));
    if (S.find.q !== q) return;
    S.find.runs = res;
    findInfo();
    renderSearch();
    findMarks();
  } catch (e) {
    if (e.name !== 'AbortError') showError(`Search: ${e.message}`);
  }
  requestDraw();
}

// findMarks asks where the kernel matches in view lie, for the rows drawn as aggregates.
async function findMarks() {
  const q = S.find.q;
  if (!q) return;
  try {
    const res = await Promise.all(S.runs.map((r, ri) => {
      const [t0, t1] = runRange(ri, S.t0, S.t1);
      return getJSON(searchURL(ri, `&kinds=kernel&limit=${SEARCH_MARKS}&names=0&t0=${t0}&t1=${t1}`));
    }));
    if (S.find.q !== q) return;
    S.find.hits = res.map((r) => r.items);
    requestDraw();
  } catch (e) {
    if (e.name !== 'AbortError') showError(`Search: ${e.message}`);
  }
}

// findInfo writes "k of N" (or "N matches" before a step) beside the box.
function findInfo() {
  const n = searchTotal();
  const info = $('find-info');
  if (!n) info.textContent = 'no match';
  else if (S.find.k < 0) info.textContent = `${fmtCount(n)} match${n === 1 ? '' : 'es'}`;
  else info.textContent = `${fmtCount(S.find.k + 1)} of ${fmtCount(n)}`;
}

// matchAt reads match k of all (searchSpot) from its run.
async function matchAt(k) {
  const [ri, i] = searchSpot(k);
  const r = await getJSON(searchURL(ri, `&from=${i}&limit=1&names=0`));
  const it = r.items;
  if (!it.id.length) return null;
  return { run: ri, index: i, kind: it.kind[0], id: it.id[0], row: it.row[0], depth: it.depth[0], s: it.s[0], d: it.d[0], name: it.name[0] };
}

// findStep steps to the next (dir 1) or previous (-1) match, in time order over every kind; the
// first step goes to the first match at or after the view's centre (or the last before it).
async function findStep(dir) {
  if ($('find').value.trim() !== S.find.q || !S.find.runs.length) await runFind();
  const n = searchTotal();
  if (!n) return;
  let k = S.find.k;
  if (k < 0) {
    const mid = (S.t0 + S.t1) / 2;
    let before = 0;
    k = n; // past the end: wraps to the first
    for (let ri = 0; ri < S.runs.length; ri++) {
      const at = Math.round(mid - ((S.shift && S.shift[ri]) || 0));
      const r = await getJSON(searchURL(ri, `&at=${at}&limit=0&names=0`));
      if (r.first < r.total) { k = before + r.first; break; }
      before += r.total;
    }
    if (dir < 0) k -= 1;
  } else {
    k += dir;
  }
  k = ((k % n) + n) % n;
  await findGo(k);
}

// findGo makes match k the current one: selected (details, flow), brought into view (the view's
// length kept, or widened to show it whole), and the results list started from it.
async function findGo(k) {
  try {
    const m = await matchAt(k);
    if (!m) return;
    S.find.k = k;
    S.find.current = m;
    findInfo();
    const sh = (S.shift && S.shift[m.run]) || 0;
    const span = Math.max(S.t1 - S.t0, m.d * 1.5, MIN_SPAN);
    const c = m.s + sh + m.d / 2;
    if (m.s + sh < S.t0 || m.s + sh + m.d > S.t1) setView(c - span / 2, c + span / 2);
    if (m.kind === 'kernel') await showKernel(m.run, m.id);
    else await showItem(m.run, m.kind, m.id);
    renderSearch();
  } catch (e) {
    if (e.name !== 'AbortError') showError(`Search: ${e.message}`);
  }
}

// ------------------------------------------------------------------ results

// renderSearch fills the Search tab of the bottom panel: per run the count per kind, the names
// matched with their counts, and the matches from the current one on, each a link.
async function renderSearch() {
  const box = $('search-body');
  box.textContent = '';
  if (!S.find.q) return;
  const head = el('div', 'range-head');
  head.append('Search ', el('b', null, S.find.q), ` · ${fmtCount(searchTotal())} matches in ${S.runs.length > 2 ? `all ${S.runs.length} runs` : S.runs.length > 1 ? 'both runs' : 'the run'}`);
  box.append(head);
  S.find.runs.forEach((r, ri) => {
    const tag = S.runs.length > 1 ? `${runLetter(ri)} · ` : '';
    const kinds = el('div', 'blk');
    kinds.append(el('h4', null, `${tag}by kind`), table(['kind', 'matches'], Object.keys(KIND_WORDS).map((k) => [KIND_WORDS[k], fmtCount(r.by_kind[k])])));
    const names = el('div', 'blk wide');
    names.append(el('h4', null, `${tag}names (${fmtCount(r.nnames)})`));
    names.append(table(['kind', 'name', 'matches'], r.names.map((x) => {
      const c = el('span', 'kname', x.name);
      c.title = x.name;
      return [KIND_WORDS[x.kind], c, fmtCount(x.count)];
    })));
    if (r.nnames > r.names.length) names.append(el('div', 'kv', `${fmtCount(r.nnames - r.names.length)} more names`));
    box.append(kinds, names);
  });
  const list = el('div', 'blk wide');
  list.id = 'search-list';
  box.append(list);
  openSearch();
  const from = Math.max(0, S.find.k);
  const [ri, i] = searchSpot(from);
  if (!searchTotal()) return;
  try {
    const r = await getJSON(searchURL(ri, `&from=${i}&limit=${SEARCH_LIST}&names=0`));
    const it = r.items;
    list.append(el('h4', null, `matches from ${fmtCount(from + 1)}${S.runs.length > 1 ? ` (run ${runLetter(ri)})` : ''}`));
    list.append(table(['#', 'kind', 'name', 'start', 'duration'], it.id.map((id, j) => {
      const a = el('a', 'match', `${fmtCount(from + j + 1)}`);
      a.href = '#';
      a.dataset.k = from + j;
      const n = el('span', 'kname', it.name[j]);
      n.title = it.name[j];
      return [a, KIND_WORDS[it.kind[j]], n, fmtTime(it.s[j], 7), fmtTime(it.d[j], 4)];
    })));
  } catch (e) {
    if (e.name !== 'AbortError') showError(`Search: ${e.message}`);
  }
}

// onSearchLink goes to the match a link of the results names (data-k).
function onSearchLink(ev) {
  const a = ev.target.closest('a.match');
  if (!a) return;
  ev.preventDefault();
  findGo(+a.dataset.k);
}
