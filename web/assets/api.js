// api.js: the page's state (S: the runs from GET /api/runs, the view, the viewport's data, the
// selected range) and its queries to the server: getJSON, getStats, fetchView, which asks GET
// /api/timeline for the current viewport of every run (the server does the level of detail),
// and fetchRange (GET /api/range: what a selected range holds). API: web/API.md.
'use strict';

// ------------------------------------------------------------------ constants

const FETCH_DEBOUNCE = 40; // ms between viewport changes and the query

// ------------------------------------------------------------------ state

/* interface Run {          // one element of GET /api/runs "runs"
 *   id, label, origin_ns, summary, headline[], lanes[], processes[], rows[], names[], launches[]
 *   (summary, lanes (devices) and processes are the JSON view's objects, view/README.md)
 * }
 * interface Stats {        // GET /api/stats: what Run does not hold
 *   run, devices[] {lane, ns_at_processes[], stretch_histogram}, stretch_histogram, warnings[]
 * }
 * interface RowData {      // one element of GET /api/timeline "rows", with the query's range
 *   row, n, mode: 'kernels' | 'bins', id[], s[], d[], l[], x[], v[]  |  count[], busy[], verdict[]
 *   (kernel rows; the other kinds' answers: TrackData, tracks.js)
 * }
 * interface RangeStats {   // GET /api/range: what a selected range holds, per run
 *   run, t0, t1, kernels, ns, stretch, truncated, processes[] {process, pid, kernels, ns, stretch},
 *   nnames, names[] {name, kernels, ns, stretch}, lanes[] {lane, verdict_ns[], parallelism}
 * } */
const S = {
  verdicts: [],            // verdict names, by analysis_verdict value
  meanings: [],            // what each verdict means, same order
  rules: {},               // rule name -> the sentence that explains it
  runs: [],                // Run
  compare: null,           // GET /api/runs "compare"
  t0: 0, t1: 1,            // view, ns relative to each run's first kernel
  fullSpan: 1,             // ns: the longest run
  colorBy: 'process',
  data: [],                // per run: {t0, t1, width, lanes[], rows: Map(row -> RowData)}
  bands: [],               // layout: {type, run, lane?, row?, y, h}
  height: 0,
  hover: null,             // what is under the mouse
  selected: null,          // {run, id, s, d} of the clicked kernel (s, d once its details came)
  range: null,             // {t0, t1}: the selected time range (ns, as t0/t1), or null
  rangeStats: null,        // RangeStats per run, for S.range (null while asked)
  rangeSeq: 0,             // range query sequence, to drop stale answers
  rulerLabels: [],         // the ruler's tick labels as last drawn (read by the browser tests)
  flow: null,              // Flow (tracks.js): the selected kernel, copy or API call and its partners
  collapsed: null,         // per run, the Set of processes whose copies, API and NVTX rows are hidden
  find: { q: '', launches: [], hits: [], total: 0 }, // per run: Set of launch ids; hits per run
  follow: false,           // the server follows growing files (tlview serve --follow): poll
  generation: 0,           // the generation of S.runs (GET /api/runs), sent with every query
  seq: 0,                  // query sequence, to drop stale answers
  ready: false,            // first viewport drawn (read by the browser tests)
  lastQueryMs: 0,
  drawCount: 0,
};

const $ = (id) => document.getElementById(id);
const canvas = $('timeline');
const ctx = canvas.getContext('2d');
const ruler = $('ruler');
const rctx = ruler.getContext('2d');

// ------------------------------------------------------------------ queries

function showError(msg) {
  const e = $('error');
  e.textContent = msg;
  e.hidden = false;
  setTimeout(() => { e.hidden = true; }, 6000);
}

// withGen adds the generation the page's ids come from to a query, when the server follows
// growing files: it answers 409 when it has read them again since (follow.js reads the runs).
function withGen(url) {
  return S.follow ? `${url}${url.includes('?') ? '&' : '?'}gen=${S.generation}` : url;
}

// staleError: what a query answered 409 throws: dropped like an aborted query, as the page reads
// the new runs and asks again (followSoon, follow.js).
function staleError() {
  followSoon();
  const e = new Error('the run changed');
  e.name = 'AbortError';
  return e;
}

async function getJSON(url, signal) {
  const r = await fetch(/^api\/(runs|generation)$/.test(url) ? url : withGen(url), { signal });
  const j = await r.json();
  if (r.status === 409 && S.follow) throw staleError();
  if (!r.ok) throw new Error(j.error || `${r.status}`);
  return j;
}

// getStats reads api/stats of one run. Just after start the server is still building them and
// answers 503 with Retry-After: ask again after that many seconds (as for conc_pending).
async function getStats(ri) {
  for (;;) {
    const r = await fetch(withGen(`api/stats?run=${ri}`));
    const j = await r.json();
    if (r.ok) return j;
    if (r.status === 409 && S.follow) throw staleError();
    if (r.status !== 503) throw new Error(j.error || `${r.status}`);
    const secs = Number(r.headers.get('Retry-After'));
    await new Promise((ok) => setTimeout(ok, 1000 * (secs > 0 && secs < 60 ? secs : 1)));
  }
}

// ------------------------------------------------------------------ data

let fetchTimer = 0;
let inflight = null;

function scheduleFetch() {
  clearTimeout(fetchTimer);
  fetchTimer = setTimeout(fetchView, FETCH_DEBOUNCE);
}

// fetchView asks the server for the current viewport of every run (stale answers are dropped).
async function fetchView() {
  if (inflight) inflight.abort();
  const ac = new AbortController();
  inflight = ac;
  const seq = ++S.seq;
  const width = Math.round(plotWidth());
  const t0 = Math.floor(S.t0), t1 = Math.max(Math.ceil(S.t1), Math.floor(S.t0) + 1);
  const started = performance.now();
  try {
    const answers = await Promise.all(S.runs.map((run, ri) =>
      getJSON(`api/timeline?run=${ri}&t0=${t0}&t1=${t1}&width=${width}&kmax=${Math.max(200, width)}${rowsParam(ri)}`, ac.signal)));
    if (seq !== S.seq) return;
    S.data = answers.map((a) => {
      const rows = new Map();
      for (const r of a.rows) rows.set(r.row, r);
      return { t0: a.t0, t1: a.t1, width: a.width, lanes: a.lanes, rows };
    });
    S.lastQueryMs = performance.now() - started;
    requestDraw();
    updateStatus();
    // just after start the server may still be building its concurrency cache: ask again soon
    if (S.data.some((d) => d.lanes.some((l) => l.conc_pending))) setTimeout(scheduleFetch, 300);
    if (S.find.q) scheduleFind();
  } catch (e) {
    if (e.name !== 'AbortError') showError(`Query failed: ${e.message}`);
  } finally {
    if (inflight === ac) inflight = null;
  }
}

// fetchRange asks GET /api/range for the selected range of every run and shows the answer in
// the range panel (stale answers, for a range since changed, are dropped).
async function fetchRange() {
  const sel = S.range;
  const seq = ++S.rangeSeq;
  S.rangeStats = null;
  if (!sel) return;
  const t0 = Math.floor(sel.t0), t1 = Math.max(Math.ceil(sel.t1), t0 + 1);
  try {
    const answers = await Promise.all(S.runs.map((run, ri) => getJSON(`api/range?run=${ri}&t0=${t0}&t1=${t1}`)));
    if (seq !== S.rangeSeq) return;
    S.rangeStats = answers;
    renderRange();
  } catch (e) {
    showError(`Range: ${e.message}`);
  }
}
