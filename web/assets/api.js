// api.js: the page's state (S: the runs from GET /api/runs, the view, the viewport's data, the
// selected range) and its queries to the server: getJSON, getStats, fetchView, which asks GET
// /api/timeline for the current viewport of every run in its compact form (decodeCompact: typed
// arrays read in place; the server does the level of detail), and fetchRange (GET /api/range:
// what a selected range holds). API: web/API.md.
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
 *   (kernel rows; the other kinds' answers: TrackData, tracks.js). The arrays are typed arrays
 *   (decodeCompact); x is NaN where the JSON answer has null.
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
  experiment: null,        // GET /api/experiment (experiment.js), or null
  t0: 0, t1: 1,            // view, ns relative to each run's first kernel
  fullSpan: 1,             // ns: the longest run
  colorBy: 'process',       // kernels coloured by 'process' or by 'verdict'
  colorDefault: 'process', // 'verdict' where the runs overlap (colorSetup)
  data: [],                // per run: {t0, t1, width, lanes[], rows: Map(row -> RowData)}
  bands: [],               // layout: {type, run, lane?, row?, y, h}
  pinBands: [],            // the pinned lanes' tracks, on the pinned canvas (arrange.js)
  height: 0,
  pinHeight: 0,
  arrange: null,           // Arrangement (arrange.js): pinned lanes, hidden and moved rows
  hover: null,             // what is under the mouse
  selected: null,          // {run, id, s, d} of the clicked kernel (s, d once its details came)
  item: null,              // {run, kind, id} of the clicked copy, API call or NVTX range
  range: null,             // {t0, t1}: the selected time range (ns, as t0/t1), or null
  rangeStats: null,        // RangeStats per run, for S.range (null while asked)
  rangeSeq: 0,             // range query sequence, to drop stale answers
  rulerLabels: [],         // the ruler's tick labels as last drawn (read by the browser tests)
  flow: null,              // Flow (tracks.js): the selected kernel, copy or API call and its partners
  collapsed: null,         // per run, the Set of processes whose copies, API and NVTX rows are hidden
  find: { q: '', runs: [], k: -1, launches: [], hits: [], current: null }, // search.js: the text,
                           // SearchRun per run, the current match's position (-1: none), per run
                           // the Set of matching launches and the kernel matches in view
  follow: false,           // the server follows growing files (tlview serve --follow): poll
  generation: 0,           // the generation of S.runs (GET /api/runs), sent with every query
  seq: 0,                  // query sequence, to drop stale answers
  ready: false,            // first viewport drawn (read by the browser tests)
  lastQueryMs: 0,
  drawCount: 0,
  shift: [0, 0],           // ns added to each run's times in the view: run B aligned on A (align.js)
  gone: false,             // the server stopped answering (apiFetch)
  align: null,             // how B was aligned: {how: 'range' | 'kernel' | 'drag', what}, or null
};

const $ = (id) => document.getElementById(id);
const canvas = $('timeline');
const mainCtx = canvas.getContext('2d');
const pinned = $('pinned');          // the pinned lanes' tracks (arrange.js)
const pinCtx = pinned.getContext('2d');
let ctx = mainCtx;                   // the canvas being drawn: the timeline's, or the pinned one's
let surfH = 0;                       // its height (CSS px)
const ruler = $('ruler');
const rctx = ruler.getContext('2d');

// ------------------------------------------------------------------ queries

// showError shows a message at the foot of the page for a few seconds (not once the server is gone:
// serverGone says that).
function showError(msg) {
  if (serverGone()) return; // one message says it all
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

// apiFetch is fetch() for the page's queries: a failure of the network itself (the server
// stopped, or the machine is gone) shows a message that stays (serverGone) instead of each
// query's "Failed to fetch".
async function apiFetch(url, opts) {
  try {
    return await fetch(url, opts);
  } catch (e) {
    if (e.name !== 'AbortError') {
      S.gone = true;
      serverGone();
    }
    throw e;
  }
}

// serverGone shows, once the server stopped answering, what happened and what to do; true then.
function serverGone() {
  if (!S.gone) return false;
  const g = $('gone');
  if (g.hidden) {
    g.textContent = 'The tlview server is not answering: it was stopped, or its machine is out of reach. Start `tlview serve` again, then reload this page (its view is kept in the URL).';
    g.hidden = false;
  }
  return true;
}

// getJSON asks the API for url (with the generation, when following) and parses the answer; throws
// with the server's error text on a 4xx or 5xx.
async function getJSON(url, signal) {
  const r = await apiFetch(/^api\/(runs|generation|status)$/.test(url) ? url : withGen(url), { signal });
  const j = await r.json();
  if (r.status === 409 && S.follow) throw staleError();
  if (!r.ok) throw new Error(j.error || `${r.status}`);
  return j;
}

// The typed array of each type of the compact answer's descriptors (web/API.md).
const BIN_TYPES = {
  u8: Uint8Array, i8: Int8Array, u16: Uint16Array, i16: Int16Array, u32: Uint32Array,
  i32: Int32Array, f32: Float32Array, f64: Float64Array, i64: BigInt64Array,
};
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

// round4 is the number with 4 significant digits nearest to v (a float32 of such a number): the
// value the JSON answer's text holds, exactly (m / 10^k is correctly rounded, as JSON.parse is).
function round4(v) {
  const a = Math.abs(v);
  if (!isFinite(v) || a === 0) return v;
  const k = 3 - Math.floor(Math.log10(a));
  if (k < -12 || k > 15) return Number(v.toPrecision(4));
  const r = k >= 0 ? Math.round(a * POW10[k]) / POW10[k] : Math.round(a / POW10[-k]) * POW10[-k];
  return v < 0 ? -r : r;
}

// binArray is the array that descriptor d ({"@": type, o: offset, n: count, ...}) describes in
// the data section of buf (at byte `at`): the typed array itself, read in place; values that the
// descriptor shifts (base), sums (delta: each element is the step from the value before, the
// first from base; with esc, an element that is the type's least value stands for the next
// step of esc), scales (scale, null) or rounds (digits) or NaN that means null (nulls)
// become the numbers (or nulls) of the JSON answer; indexes into the answer's table of strings
// (strings) become its strings; "tuples" become arrays of arrays.
function binArray(buf, at, d, strings) {
  if (d['@'] === 'tuples') {
    const cols = d.cols.map((c) => binArray(buf, at, c, strings));
    return Array.from({ length: d.n }, (_, i) => cols.map((c) => c[i]));
  }
  const T = BIN_TYPES[d['@']];
  if (!T) throw new Error(`compact answer: unknown type ${d['@']}`);
  let a;
  if (LITTLE_ENDIAN) a = new T(buf, at + d.o, d.n);
  else { // read each value little-endian
    a = new T(d.n);
    const dv = new DataView(buf, at + d.o), get = `get${T.name.replace('Array', '')}`, size = T.BYTES_PER_ELEMENT;
    for (let i = 0; i < d.n; i++) a[i] = size === 1 ? dv[get](i) : dv[get](i * size, true);
  }
  if (T === BigInt64Array) a = Float64Array.from(a, Number);
  if (d.strings) return Array.from(a, (i) => strings[i]);
  if (d.delta) { // a running sum: every partial sum is one of the values, exact in a double
    const out = new Float64Array(d.n);
    let v = d.base || 0;
    if (d.esc) { // steps that do not fit: the type's least value, the step itself next in esc
      const x = binArray(buf, at, d.esc), mark = -(2 ** (8 * T.BYTES_PER_ELEMENT - 1));
      for (let i = 0, k = 0; i < d.n; i++) out[i] = v += a[i] === mark ? x[k++] : a[i];
    } else for (let i = 0; i < d.n; i++) out[i] = v += a[i];
    return out;
  }
  if (d.base != null) {
    const out = new Float64Array(d.n);
    for (let i = 0; i < d.n; i++) out[i] = a[i] + d.base;
    return out;
  }
  if (d.scale) return Array.from(a, (v) => (d.null != null && v === d.null ? null : v / d.scale));
  if (d.nulls) return Array.from(a, (v) => (Number.isNaN(v) ? null : v));
  if (d.digits === 4) return Float64Array.from(a, round4);
  return a;
}

// decodeCompact reads a compact answer (GET /api/timeline?format=bin, web/API.md): the magic
// "TLVB", the header's offset (u32, little-endian), the data section from byte 8, then the JSON
// header; every descriptor in the header is replaced by its array, giving the JSON answer's object
// (the header's table of strings, "strings", which the descriptors of names index, taken out).
function decodeCompact(buf) {
  const b = new Uint8Array(buf, 0, Math.min(8, buf.byteLength));
  if (buf.byteLength < 8 || String.fromCharCode(b[0], b[1], b[2], b[3]) !== 'TLVB') throw new Error('not a compact answer');
  const h = new DataView(buf).getUint32(4, true);
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, h)));
  const strings = head.strings || [];
  delete head.strings;
  const walk = (x) => {
    if (Array.isArray(x)) return x.map(walk);
    if (x === null || typeof x !== 'object') return x;
    if ('@' in x) return binArray(buf, 8, x, strings);
    for (const k of Object.keys(x)) x[k] = walk(x[k]);
    return x;
  };
  return walk(head);
}

// getCompact asks for a compact answer and decodes it (errors are JSON, as everywhere).
async function getCompact(url, signal) {
  const r = await apiFetch(url, { signal });
  if (!r.ok) {
    const j = await r.json();
    throw new Error(j.error || `${r.status}`);
  }
  return decodeCompact(await r.arrayBuffer());
}

// getStats reads api/stats of one run. Just after start the server is still building them and
// answers 503 with Retry-After: ask again after that many seconds (as for conc_pending).
async function getStats(ri) {
  for (;;) {
    const r = await apiFetch(withGen(`api/stats?run=${ri}`));
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

// scheduleFetch asks for the viewport FETCH_DEBOUNCE ms after the last change of view.
function scheduleFetch() {
  clearTimeout(fetchTimer);
  fetchTimer = setTimeout(fetchView, FETCH_DEBOUNCE);
}

// runRange is the integer range [t0, t1) of run ri's own times that the view's [a, b) shows
// (run B shifted: align.js), at least 1 ns long.
function runRange(ri, a, b) {
  const sh = (S.shift && S.shift[ri]) || 0;
  const t0 = Math.floor(a - sh);
  return [t0, Math.max(Math.ceil(b - sh), t0 + 1)];
}

// fetchView asks the server for the current viewport of every run (stale answers are dropped).
async function fetchView() {
  if (inflight) inflight.abort();
  const ac = new AbortController();
  inflight = ac;
  const seq = ++S.seq;
  const width = Math.round(plotWidth());
  const started = performance.now();
  try {
    const answers = await Promise.all(S.runs.map((run, ri) => {
      const [t0, t1] = runRange(ri, S.t0, S.t1);
      return getCompact(`api/timeline?run=${ri}&t0=${t0}&t1=${t1}&width=${width}&kmax=${Math.max(200, width)}${rowsParam(ri)}&format=bin`, ac.signal);
    }));
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
    if (S.find.q) findMarks();
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
  try {
    const answers = await Promise.all(S.runs.map((run, ri) => {
      if (!rangeHasRows(ri)) return null; // an area over the other run's rows only
      const [t0, t1] = runRange(ri, sel.t0, sel.t1);
      return getJSON(`api/range?run=${ri}&t0=${t0}&t1=${t1}${rangeRowsParam(ri)}`);
    }));
    if (seq !== S.rangeSeq) return;
    S.rangeStats = answers;
    renderRange();
  } catch (e) {
    showError(`Range: ${e.message}`);
  }
}
