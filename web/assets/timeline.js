// timeline.js: the page of `tlview serve`. Draws one or two analysed runs on a canvas: a lane
// per GPU with its concurrency track and overlap windows shaded by verdict, a row per process
// stream with its kernels; zoom, pan, hover, details, find, stats. The server does the level of
// detail (GET /api/timeline returns kernels or per-pixel aggregates), so the page only ever holds
// about one viewport's worth of data. View state lives in the URL hash. API: web/API.md.
'use strict';

// ------------------------------------------------------------------ constants

const PROCESS_COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948',
  '#b07aa1', '#ff9da7', '#9c755f', '#8cd17d', '#499894', '#d37295'];
const VERDICT_COLORS = { // by verdict name (GET /api/runs "verdicts")
  idle: '#d9dde3', solo: '#8d99ab', concurrent: '#2e9e4f', 'time-sliced': '#d64541',
  contended: '#f08c00', queued: '#1f8fb3', unknown: '#8e6cc4',
};
const GUTTER = 230;        // px of labels at the left of the canvas
const RUN_H = 26;          // run header band
const LANE_H = 22;         // lane (GPU) header band
const CONC_H = 34;         // concurrency track
const VBAND_H = 10;        // overlap-verdict strip
const ROW_H = 18;          // one stream row
const LANE_GAP = 8;
const MIN_SPAN = 10;       // ns: the deepest zoom
const FETCH_DEBOUNCE = 40; // ms between viewport changes and the query
const FIND_LIMIT = 2000;

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
  selected: null,          // {run, id} of the clicked kernel
  find: { q: '', launches: [], hits: [], total: 0 }, // per run: Set of launch ids; hits per run
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

// ------------------------------------------------------------------ helpers

// fmtTime formats a duration in ns with a unit that suits it.
function fmtTime(ns, digits = 3) {
  const a = Math.abs(ns);
  if (a < 1e3) return `${+ns.toFixed(0)} ns`;
  if (a < 1e6) return `${+(ns / 1e3).toPrecision(digits)} µs`;
  if (a < 1e9) return `${+(ns / 1e6).toPrecision(digits)} ms`;
  return `${+(ns / 1e9).toPrecision(digits + 1)} s`;
}

// fmtPct formats a share 0..1.
function fmtPct(x) {
  return x == null || !isFinite(x) ? '–' : `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;
}

// fmtX formats a stretch or gain factor.
function fmtX(x) {
  return x == null || !isFinite(x) ? '–' : `×${x.toFixed(2)}`;
}

// esc escapes text for innerHTML.
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// shortName drops the argument list of a demangled name, for labels on bars.
function shortName(n) {
  const i = n.indexOf('(');
  return i > 0 ? n.slice(0, i) : n;
}

// el builds an element with a class and text.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

// swatch is a small coloured box (the colour set through the CSSOM, which the CSP allows).
function swatch(color) {
  const s = el('span', 'sw');
  s.style.background = color;
  return s;
}

function verdictColor(v) {
  return VERDICT_COLORS[S.verdicts[v]] || '#999';
}

function processColor(run, p) {
  return PROCESS_COLORS[p % PROCESS_COLORS.length];
}

function showError(msg) {
  const e = $('error');
  e.textContent = msg;
  e.hidden = false;
  setTimeout(() => { e.hidden = true; }, 6000);
}

async function getJSON(url, signal) {
  const r = await fetch(url, { signal });
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || `${r.status}`);
  return j;
}

// getStats reads api/stats of one run. Just after start the server is still building them and
// answers 503 with Retry-After: ask again after that many seconds (as for conc_pending).
async function getStats(ri) {
  for (;;) {
    const r = await fetch(`api/stats?run=${ri}`);
    const j = await r.json();
    if (r.ok) return j;
    if (r.status !== 503) throw new Error(j.error || `${r.status}`);
    const secs = Number(r.headers.get('Retry-After'));
    await new Promise((ok) => setTimeout(ok, 1000 * (secs > 0 && secs < 60 ? secs : 1)));
  }
}

// ------------------------------------------------------------------ coordinates

// plotWidth is the width of the time axis in CSS px. clientWidth is read once per frame, event
// or resize (cssWidth): reading it per bar forced a layout query per call and cost ~100 ms a frame.
let cssWidth = 0;
function plotWidth() {
  return Math.max(50, (cssWidth || canvas.clientWidth) - GUTTER);
}

// timeToX maps ns (relative) to a canvas x in CSS px.
function timeToX(t) {
  return GUTTER + (t - S.t0) * plotWidth() / (S.t1 - S.t0);
}

// xToTime maps a canvas x in CSS px to ns (relative).
function xToTime(x) {
  return S.t0 + (x - GUTTER) * (S.t1 - S.t0) / plotWidth();
}

// setView changes the visible range (clamped), redraws and queries the server.
function setView(t0, t1) {
  let span = Math.max(MIN_SPAN, t1 - t0);
  const lim = S.fullSpan * 1.5 + 1e3;
  if (span > lim) span = lim;
  const c = (t0 + t1) / 2;
  t0 = c - span / 2;
  const lo = -S.fullSpan * 0.25 - 1e3, hi = S.fullSpan * 1.25 + 1e3;
  if (t0 < lo) t0 = lo;
  if (t0 + span > hi) t0 = hi - span;
  S.t0 = t0;
  S.t1 = t0 + span;
  writeHash();
  requestDraw();
  scheduleFetch();
}

function zoom(factor, atX) {
  const x = atX == null ? GUTTER + plotWidth() / 2 : atX;
  const t = xToTime(x);
  setView(t - (t - S.t0) * factor, t + (S.t1 - t) * factor);
}

function pan(fraction) {
  const d = (S.t1 - S.t0) * fraction;
  setView(S.t0 + d, S.t1 + d);
}

function fitAll() {
  const pad = S.fullSpan * 0.02;
  setView(-pad, S.fullSpan + pad);
}

// ------------------------------------------------------------------ URL state

function writeHash() {
  const p = new URLSearchParams();
  p.set('t0', Math.round(S.t0));
  p.set('t1', Math.round(S.t1));
  if (S.colorBy !== 'process') p.set('color', S.colorBy);
  if (S.find.q) p.set('q', S.find.q);
  if (S.selected) p.set('sel', `${S.selected.run}:${S.selected.id}`);
  history.replaceState(null, '', `#${p.toString()}`);
}

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const t0 = parseFloat(p.get('t0')), t1 = parseFloat(p.get('t1'));
  const color = p.get('color');
  if (color === 'verdict' || color === 'process') S.colorBy = color;
  $('colorby').value = S.colorBy;
  const q = p.get('q');
  if (q) { $('find').value = q; }
  const sel = /^(\d+):(\d+)$/.exec(p.get('sel') || '');
  return { t0, t1, q, sel: sel ? { run: +sel[1], id: +sel[2] } : null };
}

// ------------------------------------------------------------------ layout

// layout computes the bands (run, lane, concurrency, verdict strip, rows) and the canvas height.
function layout() {
  const bands = [];
  let y = 0;
  S.runs.forEach((run, ri) => {
    if (S.runs.length > 1) { bands.push({ type: 'run', run: ri, y, h: RUN_H }); y += RUN_H; }
    run.lanes.forEach((lane, li) => {
      bands.push({ type: 'lane', run: ri, lane: li, y, h: LANE_H }); y += LANE_H;
      bands.push({ type: 'conc', run: ri, lane: li, y, h: CONC_H }); y += CONC_H;
      bands.push({ type: 'vband', run: ri, lane: li, y, h: VBAND_H }); y += VBAND_H;
      const rowsY = y;
      let prevProc = -1;
      run.rows.forEach((row, rid) => {
        if (row.lane !== li) return;
        bands.push({ type: 'row', run: ri, lane: li, row: rid, y, h: ROW_H, first: row.process !== prevProc });
        prevProc = row.process;
        y += ROW_H;
      });
      bands.push({ type: 'laneend', run: ri, lane: li, y: rowsY, h: y - rowsY });
      y += LANE_GAP;
    });
  });
  S.bands = bands;
  S.height = Math.max(y, 60);
  resizeCanvases();
}

function resizeCanvases() {
  const dpr = window.devicePixelRatio || 1;
  cssWidth = canvas.clientWidth;
  const top = `${$('top').offsetHeight}px`; // the header may wrap: keep the ruler right below it
  ruler.style.top = top;
  $('details').style.top = top;
  const w = canvas.clientWidth;
  canvas.style.height = `${S.height}px`;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(S.height * dpr);
  ruler.width = Math.round(ruler.clientWidth * dpr);
  ruler.height = Math.round(ruler.clientHeight * dpr);
}

function bandAt(y) {
  for (const b of S.bands) if (b.type !== 'laneend' && y >= b.y && y < b.y + b.h) return b;
  return null;
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
      getJSON(`api/timeline?run=${ri}&t0=${t0}&t1=${t1}&width=${width}&kmax=${Math.max(200, width)}`, ac.signal)));
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

// ------------------------------------------------------------------ drawing

let drawPending = false;
function requestDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => { drawPending = false; draw(); });
}

// binX maps pixel j of an answer over [a.t0, a.t1) to canvas x (answers may lag the view).
function binEdges(d, j) {
  const px = (d.t1 - d.t0) / d.width;
  return [timeToX(d.t0 + j * px), timeToX(d.t0 + (j + 1) * px)];
}

function draw() {
  const dpr = window.devicePixelRatio || 1;
  const W = cssWidth = canvas.clientWidth;
  if (Math.round(W * dpr) !== canvas.width) resizeCanvases();
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, S.height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  drawGrid();
  // overlap shading first, so that it tints the rows' background and not their kernels
  for (const b of S.bands) if (b.type === 'laneend') drawOverlapShade(b, S.data[b.run]);
  for (const d of S.data) { // pixel edges of each answer on the current view, once per frame
    const px = (d.t1 - d.t0) / d.width;
    if (!d.xs || d.xs.length !== d.width + 1) d.xs = new Float64Array(d.width + 1);
    for (let j = 0; j <= d.width; j++) d.xs[j] = timeToX(d.t0 + j * px);
  }
  layerBegin();
  for (const b of S.bands) if (b.type === 'row') drawRow(b, S.runs[b.run], S.data[b.run], 'bars');
  layerEnd();
  for (const b of S.bands) if (b.type === 'row') drawRow(b, S.runs[b.run], S.data[b.run], 'marks');
  for (const b of S.bands) {
    const run = S.runs[b.run];
    const d = S.data[b.run];
    switch (b.type) {
      case 'run': drawRunHeader(b, run); break;
      case 'lane': drawLaneHeader(b, run); break;
      case 'conc': drawConc(b, run, d); break;
      case 'vband': drawVerdictStrip(b, d); break;
    }
  }
  // gutter border
  ctx.fillStyle = '#dde1e7';
  ctx.fillRect(GUTTER - 1, 0, 1, S.height);
  drawRuler();
  drawHover();
  S.drawCount++;
}

function drawGrid() {
  const { step } = tickStep();
  ctx.fillStyle = '#f0f2f5';
  for (let t = Math.ceil(S.t0 / step) * step; t < S.t1; t += step) {
    const x = Math.round(timeToX(t));
    if (x > GUTTER) ctx.fillRect(x, 0, 1, S.height);
  }
  ctx.fillStyle = '#f7f8fa';
  ctx.fillRect(0, 0, GUTTER - 1, S.height);
}

function drawRunHeader(b, run) {
  ctx.fillStyle = '#e8ecf2';
  ctx.fillRect(0, b.y, cssWidth, b.h);
  ctx.fillStyle = '#1d2430';
  ctx.font = '600 12px system-ui, sans-serif';
  ctx.fillText(ellipsis(`${String.fromCharCode(65 + b.run)}  ${run.label}`, GUTTER - 18), 10, b.y + b.h / 2);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#6b7585';
  ctx.fillText(`${run.summary.kernels.toLocaleString()} kernels · span ${fmtTime(run.summary.span_ns)}`, GUTTER + 8, b.y + b.h / 2);
}

function drawLaneHeader(b, run) {
  const lane = run.lanes[b.lane];
  ctx.fillStyle = '#1d2430';
  ctx.font = '600 11.5px system-ui, sans-serif';
  ctx.fillText(`GPU ${lane.lane} · ${lane.name || 'unknown'}`, 10, b.y + b.h / 2 + 1);
  ctx.font = '11px system-ui, sans-serif';
  const txt = `${lane.processes} processes · ${lane.contexts} contexts · ${lane.kernels.toLocaleString()} kernels · ${mpsText(lane.mps)}`;
  ctx.fillStyle = '#6b7585';
  ctx.fillText(txt, GUTTER + 8, b.y + b.h / 2 + 1);
  const tw = ctx.measureText(txt).width;
  const vc = verdictColor(S.verdicts.indexOf(lane.verdict));
  ctx.fillStyle = vc;
  roundRect(GUTTER + 16 + tw, b.y + 4, ctx.measureText(lane.verdict).width + 14, b.h - 8, 7);
  ctx.fill();
  ctx.fillStyle = '#fff';
  ctx.font = '600 10.5px system-ui, sans-serif';
  ctx.fillText(lane.verdict, GUTTER + 23 + tw, b.y + b.h / 2 + 1);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#e3e6eb';
  ctx.fillRect(0, b.y, cssWidth, 1);
}

function roundRect(x, y, w, h, r) {
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

function laneData(d, b) {
  return d && d.lanes ? d.lanes.find((l) => l.lane === b.lane) : null;
}

// drawConc draws the concurrency track: mean processes in flight (area), peak (line).
function drawConc(b, run, d) {
  const lane = run.lanes[b.lane];
  const top = Math.max(1, lane.processes);
  ctx.fillStyle = '#6b7585';
  ctx.fillText('concurrency', 22, b.y + b.h / 2 - 7);
  ctx.fillStyle = '#9aa3b0';
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillText(`processes in flight, 0–${top}`, 22, b.y + b.h / 2 + 6);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#fafbfc';
  ctx.fillRect(GUTTER, b.y, cssWidth - GUTTER, b.h);
  // guide lines at each level
  ctx.fillStyle = '#eceff3';
  for (let k = 1; k <= top; k++) ctx.fillRect(GUTTER, Math.round(b.y + b.h - 2 - (b.h - 4) * k / top), cssWidth - GUTTER, 1);
  const L = laneData(d, b);
  if (L && L.conc_pending) {
    ctx.fillStyle = '#9aa3b0';
    ctx.fillText('computing the concurrency profile…', GUTTER + 10, b.y + b.h / 2);
    return;
  }
  if (L && !L.conc_mean) { // the server has no profile for so wide a range (no cache)
    ctx.fillStyle = '#9aa3b0';
    ctx.fillText('no concurrency profile at this zoom: zoom in', GUTTER + 10, b.y + b.h / 2);
    return;
  }
  if (!L) return;
  const yOf = (v) => b.y + b.h - 2 - (b.h - 4) * Math.min(v, top) / top;
  ctx.beginPath();
  let started = false;
  for (let j = 0; j < d.width; j++) {
    const [x0, x1] = binEdges(d, j);
    if (x1 < GUTTER || x0 > cssWidth) continue;
    const y = yOf(L.conc_mean[j]);
    if (!started) { ctx.moveTo(Math.max(GUTTER, x0), yOf(0)); started = true; }
    ctx.lineTo(Math.max(GUTTER, x0), y);
    ctx.lineTo(x1, y);
  }
  if (started) {
    ctx.lineTo(Math.min(cssWidth, timeToX(d.t1)), yOf(0));
    ctx.closePath();
    ctx.fillStyle = 'rgba(47,111,208,0.28)';
    ctx.fill();
  }
  ctx.beginPath();
  started = false;
  for (let j = 0; j < d.width; j++) {
    const [x0, x1] = binEdges(d, j);
    if (x1 < GUTTER || x0 > cssWidth) continue;
    const y = yOf(L.conc_max[j]) + 0.5;
    if (!started) { ctx.moveTo(Math.max(GUTTER, x0), y); started = true; } else ctx.lineTo(Math.max(GUTTER, x0), y);
    ctx.lineTo(x1, y);
  }
  ctx.strokeStyle = '#2f5fa8';
  ctx.lineWidth = 1;
  ctx.stroke();
}

// overlapSpans yields [x0, x1, verdict] of overlap windows in view: exact windows when the server
// listed them, else runs of equal per-pixel verdicts.
function overlapSpans(d, L) {
  const out = [];
  if (!L) return out;
  if (L.windows) {
    for (const w of L.windows) out.push([timeToX(w[1]), timeToX(w[2]), w[3], w[0]]);
    return out;
  }
  let j0 = -1;
  for (let j = 0; j <= d.width; j++) {
    const v = j < d.width ? L.verdict[j] : -1;
    const ov = v >= 2;
    if (j0 >= 0 && (!ov || v !== L.verdict[j0])) {
      out.push([binEdges(d, j0)[0], binEdges(d, j - 1)[1], L.verdict[j0], -1]);
      j0 = -1;
    }
    if (ov && j0 < 0) j0 = j;
  }
  return out;
}

function drawVerdictStrip(b, d) {
  ctx.fillStyle = '#eef0f3';
  ctx.fillRect(GUTTER, b.y + 1, cssWidth - GUTTER, b.h - 2);
  const L = laneData(d, b);
  for (const [x0, x1, v] of overlapSpans(d, L)) {
    ctx.fillStyle = verdictColor(v);
    ctx.fillRect(Math.max(GUTTER, x0), b.y + 1, Math.max(1.5, Math.min(x1, cssWidth) - Math.max(GUTTER, x0)), b.h - 2);
  }
  ctx.fillStyle = '#9aa3b0';
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillText('overlap verdict', 22, b.y + b.h / 2);
  ctx.font = '11px system-ui, sans-serif';
}

// drawOverlapShade tints the rows of a lane behind the overlap windows.
function drawOverlapShade(b, d) {
  const L = laneData(d, b);
  ctx.globalAlpha = 0.11;
  for (const [x0, x1, v] of overlapSpans(d, L)) {
    ctx.fillStyle = verdictColor(v);
    ctx.fillRect(Math.max(GUTTER, x0), b.y, Math.max(1, Math.min(x1, cssWidth) - Math.max(GUTTER, x0)), b.h);
  }
  ctx.globalAlpha = 1;
}

function rowLabel(run, row) {
  const p = run.processes[row.process];
  return { head: `pid ${p.pid}${p.mps === 'on' ? ' · MPS' : ''}`, sub: `ctx ${row.context} · stream ${row.stream}` };
}

// ------------------------------------------------------------------ pixel layer
// Kernel bars and per-pixel bars are written into one ImageData and composited once per frame:
// tens of thousands of canvas rectangles cost ~100 ms in a software-rendered canvas, this ~5 ms.
const layer = { canvas: document.createElement('canvas'), img: null, u32: null, w: 0, h: 0, dpr: 1, used: false };
const rgbaCache = new Map();

// rgba32 turns '#rrggbb' or 'rgb(r,g,b)' into a little-endian ABGR pixel.
function rgba32(c) {
  let v = rgbaCache.get(c);
  if (v === undefined) {
    let r, g, b;
    if (c[0] === '#') {
      const n = parseInt(c.slice(1), 16);
      r = n >> 16; g = (n >> 8) & 255; b = n & 255;
    } else {
      [r, g, b] = c.match(/\d+/g).map(Number);
    }
    v = ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
    rgbaCache.set(c, v);
  }
  return v;
}

function layerBegin() {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.width, h = canvas.height;
  if (layer.w !== w || layer.h !== h) {
    layer.canvas.width = w;
    layer.canvas.height = h;
    layer.img = new ImageData(w, h);
    layer.u32 = new Uint32Array(layer.img.data.buffer);
    layer.w = w;
    layer.h = h;
  } else if (layer.used) {
    layer.u32.fill(0);
  }
  layer.dpr = dpr;
  layer.used = false;
}

// layerRect fills a rectangle given in CSS px (at least one device pixel wide).
function layerRect(x, y, w, h, px) {
  const d = layer.dpr;
  const x0 = Math.max(0, Math.floor(x * d)), x1 = Math.min(layer.w, Math.max(x0 + 1, Math.round((x + w) * d)));
  const y0 = Math.max(0, Math.round(y * d)), y1 = Math.min(layer.h, Math.round((y + h) * d));
  const u = layer.u32, W = layer.w;
  if (x1 - x0 <= 4) { // narrow bars (most of them): plain stores beat a fill() call per line
    for (let i = y0 * W + x0, end = y1 * W; i < end; i += W) for (let k = 0; k < x1 - x0; k++) u[i + k] = px;
  } else {
    for (let yy = y0; yy < y1; yy++) u.fill(px, yy * W + x0, yy * W + x1);
  }
  layer.used = true;
}

function layerEnd() {
  if (!layer.used) return;
  layer.canvas.getContext('2d').putImageData(layer.img, 0, 0);
  ctx.drawImage(layer.canvas, 0, 0, layer.w / layer.dpr, layer.h / layer.dpr);
}

// drawRow draws one stream row: in phase 'bars' its label and its kernels or per-pixel bars
// (into the pixel layer), in phase 'marks' the names on wide kernels, highlights and find marks.
function drawRow(b, run, d, phase) {
  const row = run.rows[b.row];
  const pc = processColor(run, row.process);
  const R = d && d.rows.get(b.row);
  const y0 = b.y + 2, h = b.h - 4;
  const W = cssWidth;
  const hl = S.find.launches[b.run];
  if (phase === 'bars') {
    drawRowLabel(b, run, row, pc);
    if (!R) return;
    if (R.mode === 'kernels') {
      for (let i = 0; i < R.s.length; i++) {
        let x0 = timeToX(R.s[i]), x1 = timeToX(R.s[i] + R.d[i]);
        if (x1 < GUTTER || x0 > W) continue;
        x0 = Math.max(GUTTER, x0);
        x1 = Math.min(W, x1);
        let c = S.colorBy === 'verdict' ? verdictColor(R.v[i]) : pc;
        if (hl && hl.size && !hl.has(R.l[i])) c = dim(c);
        // a one-pixel gap keeps back-to-back kernels apart when they are wide enough
        layerRect(x0, y0, Math.max(1 / layer.dpr, x1 - x0 - (x1 - x0 > 4 ? 1 : 0)), h, rgba32(c));
      }
    } else {
      const xs = d.xs;
      for (let j = 0; j < d.width; j++) {
        if (!R.count[j]) continue;
        const x0 = xs[j], x1 = xs[j + 1];
        if (x1 < GUTTER || x0 > W) continue;
        const bh = Math.max(2, h * R.busy[j] / 1000);
        let c = S.colorBy === 'verdict' ? verdictColor(R.verdict[j] < 0 ? 1 : R.verdict[j]) : pc;
        if (hl && hl.size) c = dim(c);
        const xa = Math.max(GUTTER, x0);
        layerRect(xa, y0 + h - bh, Math.max(1 / layer.dpr, x1 - xa), bh, rgba32(c));
      }
    }
    return;
  }
  if (!R) return;
  if (R.mode === 'kernels') {
    ctx.fillStyle = '#fff';
    for (let i = 0; i < R.s.length; i++) {
      const x0 = Math.max(GUTTER, timeToX(R.s[i])), x1 = Math.min(W, timeToX(R.s[i] + R.d[i]));
      const w = x1 - x0;
      const hit = hl && hl.has(R.l[i]);
      const sel = S.selected && S.selected.run === b.run && S.selected.id === R.id[i];
      if (x1 < GUTTER || x0 > W || (w <= 46 && !hit && !sel)) continue;
      if (w > 46) {
        ctx.fillStyle = '#fff';
        ctx.fillText(ellipsis(shortName(run.names[run.launches[R.l[i]][0]]), w - 8), x0 + 4, b.y + b.h / 2);
      }
      if (hit || sel) {
        ctx.strokeStyle = sel ? '#111' : '#e0a800';
        ctx.lineWidth = sel ? 2 : 1.5;
        ctx.strokeRect(x0 + 0.5, y0 - 1, Math.max(1, w - 1), h + 2);
      }
    }
    return;
  }
  // find markers (positions of matches returned by /api/find) over aggregated rows
  const found = S.find.hits[b.run];
  if (found) {
    ctx.fillStyle = '#e0a800';
    ctx.beginPath();
    for (let i = 0; i < found.row.length; i++) {
      if (found.row[i] !== b.row) continue;
      const x0 = timeToX(found.s[i]), x1 = timeToX(found.s[i] + found.d[i]);
      if (x1 < GUTTER || x0 > W) continue;
      ctx.rect(Math.max(GUTTER, x0), y0, Math.max(1.5, x1 - x0), h);
    }
    ctx.fill();
  }
}

function drawRowLabel(b, run, row, pc) {
  if (b.first) {
    ctx.fillStyle = '#e3e6eb';
    ctx.fillRect(0, b.y, cssWidth, 1);
  }
  const lab = rowLabel(run, row);
  if (b.first) {
    ctx.fillStyle = pc;
    ctx.fillRect(10, b.y + 4, 8, b.h - 8);
    ctx.fillStyle = '#1d2430';
    ctx.font = '600 11px system-ui, sans-serif';
    ctx.fillText(lab.head, 24, b.y + b.h / 2);
    const hw = ctx.measureText(lab.head).width;
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#6b7585';
    ctx.fillText(lab.sub, 30 + hw, b.y + b.h / 2);
  } else {
    ctx.fillStyle = '#6b7585';
    ctx.fillText(lab.sub, 30 + 60, b.y + b.h / 2);
  }
}

const dimCache = new Map();
// dim returns a washed-out version of a colour, for kernels that do not match the find.
function dim(c) {
  let d = dimCache.get(c);
  if (!d) {
    const n = parseInt(c.slice(1), 16);
    const m = (v) => Math.round(v + (255 - v) * 0.72);
    d = `rgb(${m(n >> 16)},${m((n >> 8) & 255)},${m(n & 255)})`;
    dimCache.set(c, d);
  }
  return d;
}

function ellipsis(text, w) {
  if (ctx.measureText(text).width <= w) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${text.slice(0, mid)}…`).width <= w) lo = mid; else hi = mid - 1;
  }
  return lo > 0 ? `${text.slice(0, lo)}…` : '';
}

// tickStep picks a 1-2-5 step giving ticks about 110 px apart, and the unit to label them in:
// the unit of the view's position when three decimals suffice ("19.5 ms"), else the step's.
function tickStep() {
  const nsPerPx = (S.t1 - S.t0) / plotWidth();
  const raw = nsPerPx * 110;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const unitOf = (v) => (v < 1e3 ? [1, 'ns'] : v < 1e6 ? [1e3, 'µs'] : v < 1e9 ? [1e6, 'ms'] : [1e9, 's']);
  const digitsFor = (u) => Math.max(0, Math.ceil(-Math.log10(step / u[0]) - 1e-9));
  let unit = unitOf(Math.max(Math.abs(S.t0), Math.abs(S.t1)));
  if (digitsFor(unit) > 3) unit = unitOf(step);
  return { step, unit, digits: digitsFor(unit) };
}

function drawRuler() {
  const dpr = window.devicePixelRatio || 1;
  const W = ruler.clientWidth, H = ruler.clientHeight;
  if (Math.round(W * dpr) !== ruler.width) { ruler.width = Math.round(W * dpr); ruler.height = Math.round(H * dpr); }
  rctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  rctx.clearRect(0, 0, W, H);
  rctx.fillStyle = '#f7f8fa';
  rctx.fillRect(0, 0, GUTTER - 1, H);
  rctx.font = '11px system-ui, sans-serif';
  rctx.textBaseline = 'middle';
  rctx.fillStyle = '#6b7585';
  rctx.fillText(`${fmtTime(S.t1 - S.t0)} in view`, 10, H / 2);
  const { step, unit, digits } = tickStep();
  rctx.fillStyle = '#1d2430';
  for (let t = Math.ceil(S.t0 / step) * step; t < S.t1; t += step) {
    const x = Math.round(timeToX(t));
    if (x <= GUTTER) continue;
    rctx.fillRect(x, H - 8, 1, 8);
    const v = (t / unit[0]).toFixed(digits);
    rctx.fillText(`${v === '-0' ? '0' : v} ${unit[1]}`, x + 4, H / 2 - 2);
    for (let k = 1; k < 5; k++) {
      const xm = Math.round(timeToX(t + k * step / 5));
      if (xm > GUTTER && xm < W) rctx.fillRect(xm, H - 4, 1, 4);
    }
  }
  if (drag && drag.ruler) {
    rctx.fillStyle = 'rgba(47,111,208,0.25)';
    rctx.fillRect(Math.min(drag.x0, drag.x1), 0, Math.abs(drag.x1 - drag.x0), H);
  }
  rctx.fillStyle = '#dde1e7';
  rctx.fillRect(GUTTER - 1, 0, 1, H);
}

function drawHover() {
  if (!S.hover || S.hover.x == null) return;
  ctx.fillStyle = 'rgba(29,36,48,0.35)';
  ctx.fillRect(Math.round(S.hover.x), 0, 1, S.height);
}

// ------------------------------------------------------------------ hover, click

// hitTest finds what lies under canvas point (x, y).
function hitTest(x, y) {
  const b = bandAt(y);
  if (!b || x < GUTTER) return b ? { band: b } : null;
  const d = S.data[b.run];
  const run = S.runs[b.run];
  if (!d) return { band: b };
  const t = xToTime(x);
  const j = Math.floor((t - d.t0) * d.width / (d.t1 - d.t0));
  if (b.type === 'row') {
    const R = d.rows.get(b.row);
    if (!R) return { band: b };
    if (R.mode === 'kernels') {
      const tol = 3 * (S.t1 - S.t0) / plotWidth();
      let best = -1, bestDist = Infinity;
      for (let i = 0; i < R.s.length; i++) {
        const s = R.s[i], e = R.s[i] + R.d[i];
        const dist = t < s ? s - t : t > e ? t - e : 0;
        if (dist <= tol && dist < bestDist) { best = i; bestDist = dist; }
      }
      if (best >= 0) return { band: b, kernel: best, R };
      return { band: b };
    }
    if (j >= 0 && j < d.width && R.count[j]) return { band: b, bin: j, R, d };
    return { band: b };
  }
  if (b.type === 'conc' || b.type === 'vband') {
    const L = laneData(d, b);
    if (!L) return { band: b };
    if (L.windows) {
      for (const w of L.windows) if (t >= w[1] && t < w[2]) return { band: b, window: w, L, j };
    }
    if (j >= 0 && j < d.width) return { band: b, lanebin: j, L };
  }
  void run;
  return { band: b };
}

function tooltipHTML(h) {
  const b = h.band, run = S.runs[b.run];
  if (h.kernel != null) {
    const R = h.R, i = h.kernel;
    const L = run.launches[R.l[i]];
    const row = run.rows[b.row];
    const p = run.processes[row.process];
    const v = S.verdicts[R.v[i]];
    return `<div class="name">${esc(run.names[L[0]])}</div>` +
      `<div class="kv">pid <b>${p.pid}</b> · stream <b>${row.stream}</b> · GPU <b>${run.lanes[row.lane].lane}</b></div>` +
      `<div class="kv">grid <b>(${L[1]}, ${L[2]}, ${L[3]})</b> · block <b>(${L[4]}, ${L[5]}, ${L[6]})</b></div>` +
      `<div class="kv">duration <b>${fmtTime(R.d[i])}</b> · stretch <b>${fmtX(R.x[i])}</b></div>` +
      `<div class="kv">start <b>${fmtTime(R.s[i], 6)}</b> · verdict <b>${esc(v)}</b></div>`;
  }
  if (h.bin != null) {
    const R = h.R, j = h.bin, d = h.d;
    const px = (d.t1 - d.t0) / d.width;
    const v = R.verdict[j] >= 0 ? S.verdicts[R.verdict[j]] : '–';
    return `<div class="kv"><b>${R.count[j].toLocaleString()}</b> kernels in ${fmtTime(px)}</div>` +
      `<div class="kv">busy <b>${(R.busy[j] / 10).toFixed(1)}%</b> · verdict <b>${esc(v)}</b></div>` +
      '<div class="kv">zoom in to see single kernels</div>';
  }
  if (h.window) {
    const w = h.window;
    return `<div class="kv">overlap window <b>${esc(S.verdicts[w[3]])}</b></div>` +
      `<div class="kv">${fmtTime(w[1], 6)} – ${fmtTime(w[2], 6)} (<b>${fmtTime(w[2] - w[1])}</b>)</div>` +
      '<div class="kv">click for the evidence</div>';
  }
  if (h.lanebin != null) {
    const L = h.L, j = h.lanebin;
    const v = L.verdict[j] >= 0 ? S.verdicts[L.verdict[j]] : 'idle';
    return `<div class="kv">processes in flight: peak <b>${L.conc_max ? L.conc_max[j] : '–'}</b>, mean <b>${L.conc_mean ? L.conc_mean[j] : '–'}</b></div>` +
      `<div class="kv">busy <b>${L.busy ? (L.busy[j] / 10).toFixed(1) : '–'}%</b> · overlap <b>${(L.overlap[j] / 10).toFixed(1)}%</b> · <b>${esc(v)}</b></div>`;
  }
  return '';
}

function onMove(ev) {
  const r = canvas.getBoundingClientRect();
  const x = ev.clientX - r.left, y = ev.clientY - r.top;
  if (drag) return;
  const h = hitTest(x, y);
  S.hover = { x: x >= GUTTER ? x : null, h };
  const tip = $('tooltip');
  const html = h ? tooltipHTML(h) : '';
  if (html) {
    tip.innerHTML = html;
    tip.hidden = false;
    const wrap = $('timeline-wrap').getBoundingClientRect();
    let left = ev.clientX - wrap.left + 14, top = ev.clientY - wrap.top + 14;
    if (left + tip.offsetWidth > wrap.width - 4) left = ev.clientX - wrap.left - tip.offsetWidth - 14;
    tip.style.left = `${left}px`;
    tip.style.top = `${top}px`;
  } else {
    tip.hidden = true;
  }
  requestDraw();
}

function onLeave() {
  S.hover = null;
  $('tooltip').hidden = true;
  requestDraw();
}

// showDetails opens the side panel with one kernel's full record and its window's evidence.
async function showKernel(runIdx, id) {
  try {
    const k = await getJSON(`api/kernel?run=${runIdx}&id=${id}`);
    S.selected = { run: runIdx, id };
    writeHash();
    requestDraw();
    const rows = [
      ['process', `pid ${k.pid}`], ['GPU · context · stream', `${k.lane} · ${k.context} · ${k.stream}`],
      ['start', fmtTime(k.start, 7)], ['duration', fmtTime(k.dur, 4)],
      ['grid', `(${k.grid.join(', ')})`], ['block', `(${k.block.join(', ')})`],
      ['registers', k.registers], ['shared memory', `${k.static_smem} + ${k.dynamic_smem} B`],
      ['correlation id', k.correlation], ['stretch', fmtX(k.stretch)], ['verdict', k.verdict],
    ];
    if (k.reference) {
      rows.push(['solo reference', k.reference.reference_ns == null ? '–'
        : `${fmtTime(k.reference.reference_ns, 4)} (${k.reference.source}, ${k.reference.solo_instances} solo runs)`]);
      rows.push(['signature stretch', fmtX(k.reference.stretch)]);
    }
    let html = `<div class="mono">${esc(k.name)}</div><table>${rows.map(([a, b]) => `<tr><td>${esc(a)}</td><td>${esc(b)}</td></tr>`).join('')}</table>`;
    if (k.mangled !== k.name) html += `<h4>Mangled</h4><div class="mono">${esc(k.mangled)}</div>`;
    if (k.window) html += windowTable(k.window);
    openDetails('Kernel', html);
  } catch (e) {
    showError(`Kernel ${id}: ${e.message}`);
  }
}

// fmtStretch is a stretch with its basis: "2.14×" measured, "~4.00× (estimate: turns)".
function fmtStretch(v, basis) {
  if (v == null || basis === 'none') return '–';
  if (basis === 'reference') return fmtX(v);
  return `~${fmtX(v)} (estimate: ${basis === 'turns' ? 'contexts taking turns' : 'shortest run as solo time'})`;
}

// fmtGain is a predicted gain interval: "1.12–1.42×", or one figure when both ends agree.
function fmtGain(lo, hi) {
  if (lo == null || hi == null) return '–';
  const a = fmtX(lo), b = fmtX(hi);
  return a === b ? b : `${a.replace('×', '')}–${b}`;
}

// mpsText words a device's or process's MPS state.
function mpsText(m) {
  return { off: 'no MPS', on: 'MPS', mixed: 'MPS for some', unknown: 'MPS unknown' }[m] || m;
}

function windowTable(w) {
  const over = S.verdicts.indexOf(w.verdict) >= 2;
  const rows = [
    ['verdict', w.verdict], ['span', `${fmtTime(w.t0, 6)} – ${fmtTime(w.t1, 6)}`], ['length', fmtTime(w.t1 - w.t0)],
    ['kernels', w.kernels], ['peak processes · contexts', `${w.max_processes} · ${w.max_contexts}`],
  ];
  if (over) rows.push(
    ['rule', `${w.rule}: ${S.rules[w.rule] || ''}`], ['overlapped', fmtTime(w.overlap_ns)],
    ['contexts in flight (mean)', w.contexts_in_flight == null ? '–' : w.contexts_in_flight.toFixed(2)],
    ['stretch where they overlapped', fmtStretch(w.stretch, w.basis)],
    ['effective parallelism', w.parallelism == null ? '–' : w.parallelism.toFixed(2)],
    ['overlap share of their time', fmtPct(w.overlap_share)],
    ['reference coverage', fmtPct(w.coverage)], ['MPS client in window', w.mps ? 'yes' : 'no']);
  return `<h4>Window · evidence</h4><table>${rows.map(([a, b]) => `<tr><td>${esc(a)}</td><td>${esc(b)}</td></tr>`).join('')}</table>`;
}

async function showWindow(runIdx, id) {
  try {
    const w = await getJSON(`api/window?run=${runIdx}&id=${id}`);
    openDetails('Overlap window', windowTable(w));
  } catch (e) {
    showError(`Window ${id}: ${e.message}`);
  }
}

function openDetails(title, html) {
  $('details-title').textContent = title;
  $('details-body').innerHTML = html;
  $('details').hidden = false;
  requestDraw();
}

function closeDetails() {
  $('details').hidden = true;
  S.selected = null;
  writeHash();
  requestDraw();
}

function onClick(ev) {
  const r = canvas.getBoundingClientRect();
  const h = hitTest(ev.clientX - r.left, ev.clientY - r.top);
  if (!h) return;
  if (h.kernel != null) showKernel(h.band.run, h.R.id[h.kernel]);
  else if (h.window) showWindow(h.band.run, h.window[0]);
  else if (h.bin != null) { // zoom onto the clicked pixel's neighbourhood
    const t = xToTime(ev.clientX - r.left);
    const span = (S.t1 - S.t0) / 8;
    setView(t - span / 2, t + span / 2);
  }
}

// ------------------------------------------------------------------ pan, zoom, keys

let drag = null;

function onDown(ev) {
  if (ev.button !== 0) return;
  const r = canvas.getBoundingClientRect();
  drag = { x: ev.clientX, t0: S.t0, t1: S.t1, moved: false, startX: ev.clientX - r.left };
  canvas.classList.add('dragging');
}

function onDrag(ev) {
  if (!drag) return;
  if (drag.ruler) {
    drag.x1 = ev.clientX - ruler.getBoundingClientRect().left;
    requestDraw();
    return;
  }
  const dx = ev.clientX - drag.x;
  if (Math.abs(dx) > 2) drag.moved = true;
  if (!drag.moved) return;
  const dt = dx * (drag.t1 - drag.t0) / plotWidth();
  setView(drag.t0 - dt, drag.t1 - dt);
}

function onUp(ev) {
  if (!drag) return;
  const d = drag;
  drag = null;
  canvas.classList.remove('dragging');
  if (d.ruler) {
    const a = Math.min(d.x0, d.x1), b = Math.max(d.x0, d.x1);
    if (b - a > 4) setView(xToTime(Math.max(GUTTER, a)), xToTime(b));
    requestDraw();
    return;
  }
  if (!d.moved && ev.target === canvas) onClick(ev);
}

function onRulerDown(ev) {
  if (ev.button !== 0) return;
  const x = ev.clientX - ruler.getBoundingClientRect().left;
  drag = { ruler: true, x0: x, x1: x };
}

function onWheel(ev) {
  ev.preventDefault();
  const r = canvas.getBoundingClientRect();
  if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
    const dx = ev.shiftKey ? ev.deltaY : ev.deltaX;
    pan(dx / plotWidth());
    return;
  }
  const scale = ev.deltaMode === 1 ? 30 : 1;
  zoom(Math.exp(ev.deltaY * scale * 0.0018), Math.max(GUTTER, ev.clientX - r.left));
}

function onKey(ev) {
  if (ev.target.tagName === 'INPUT' || ev.target.tagName === 'SELECT') {
    if (ev.key === 'Escape') ev.target.blur();
    return;
  }
  const k = ev.key;
  if (k === '+' || k === '=' || k === 'w') zoom(0.6);
  else if (k === '-' || k === '_' || k === 's') zoom(1 / 0.6);
  else if (k === 'ArrowLeft' || k === 'a') pan(-0.2);
  else if (k === 'ArrowRight' || k === 'd') pan(0.2);
  else if (k === '0') fitAll();
  else if (k === '/') { $('find').focus(); } else if (k === 'Escape') closeDetails();
  else return;
  ev.preventDefault();
}

// ------------------------------------------------------------------ find

let findTimer = 0;
function scheduleFind() {
  clearTimeout(findTimer);
  findTimer = setTimeout(runFind, 150);
}

// runFind marks the launches whose name matches (for kernels drawn one by one) and asks the
// server where the matches lie in the view (for the aggregated rows).
async function runFind() {
  const q = $('find').value.trim();
  S.find.q = q;
  writeHash();
  if (!q) {
    S.find = { q: '', launches: [], hits: [], total: 0 };
    $('find-info').textContent = '';
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
    const t0 = Math.floor(S.t0), t1 = Math.ceil(S.t1);
    const res = await Promise.all(S.runs.map((r, ri) =>
      getJSON(`api/find?run=${ri}&q=${encodeURIComponent(q)}&limit=${FIND_LIMIT}&t0=${t0}&t1=${t1}`)));
    if (S.find.q !== q) return;
    S.find.hits = res.map((r) => r.kernels);
    S.find.total = res.reduce((a, r) => a + r.total, 0);
    const names = res.reduce((a, r) => a + r.names.length, 0);
    $('find-info').textContent = `${S.find.total.toLocaleString()} in view · ${names} name${names === 1 ? '' : 's'}`;
  } catch (e) {
    showError(`Find: ${e.message}`);
  }
  requestDraw();
}

// findStep jumps to the next (dir 1) or previous (-1) match outside the view's centre.
async function findStep(dir) {
  const q = $('find').value.trim();
  if (!q) return;
  const mid = (S.t0 + S.t1) / 2, half = (S.t1 - S.t0) / 2;
  let best = null;
  for (let ri = 0; ri < S.runs.length; ri++) {
    const range = dir > 0 ? `t0=${Math.ceil(mid + half * 0.02)}` : `t0=${Math.floor(-S.fullSpan)}&t1=${Math.floor(mid - half * 0.02)}`;
    try {
      const r = await getJSON(`api/find?run=${ri}&q=${encodeURIComponent(q)}&limit=${dir > 0 ? 1 : FIND_LIMIT}&${range}`);
      const n = r.kernels.s.length;
      if (!n) continue;
      const i = dir > 0 ? 0 : n - 1;
      const s = r.kernels.s[i];
      if (!best || (dir > 0 ? s < best.s : s > best.s)) best = { s, d: r.kernels.d[i], run: ri, id: r.kernels.id[i] };
    } catch (e) {
      showError(`Find: ${e.message}`);
      return;
    }
  }
  if (!best) { $('find-info').textContent = 'no further match'; return; }
  const span = Math.max(S.t1 - S.t0, best.d * 4);
  setView(best.s + best.d / 2 - span / 2, best.s + best.d / 2 + span / 2);
  showKernel(best.run, best.id);
}

// ------------------------------------------------------------------ header, legend, stats

function renderHeader() {
  const info = $('runinfo');
  info.textContent = '';
  S.runs.forEach((run, ri) => {
    const c = el('span', 'chip');
    const tag = S.runs.length > 1 ? `${String.fromCharCode(65 + ri)}: ` : '';
    c.append(`${tag}`, el('b', null, run.label), ` · ${run.summary.kernels.toLocaleString()} kernels · ${fmtTime(run.summary.span_ns)}`);
    info.append(c);
  });
  if (S.compare) {
    const c = el('span', 'chip');
    c.append('B finishes ', el('b', null, fmtX(S.compare.measured_gain)), ' faster than A');
    info.append(c);
  }
}

function renderLegend() {
  const lg = $('legend');
  lg.textContent = '';
  lg.append(el('span', 'title', S.colorBy === 'verdict' ? 'Kernels by verdict' : 'Processes'));
  if (S.colorBy === 'process') {
    S.runs.forEach((run, ri) => {
      run.processes.forEach((p, pi) => {
        if (!p.kernels) return;
        const it = el('span', 'item');
        it.append(swatch(processColor(run, pi)), `${S.runs.length > 1 ? String.fromCharCode(65 + ri) + ' ' : ''}pid ${p.pid}${p.mps === 'on' ? ' (MPS)' : ''}`);
        lg.append(it);
      });
    });
  } else {
    ['solo', 'concurrent', 'time-sliced', 'contended', 'queued', 'unknown'].forEach((v) => {
      const it = el('span', 'item');
      it.title = S.meanings[S.verdicts.indexOf(v)] || '';
      it.append(swatch(VERDICT_COLORS[v]), v);
      lg.append(it);
    });
  }
  lg.append(el('span', 'title', ' Overlap windows'));
  ['concurrent', 'time-sliced', 'contended', 'unknown'].forEach((v) => {
    const it = el('span', 'item');
    it.append(swatch(VERDICT_COLORS[v]), v);
    lg.append(it);
  });
  const it = el('span', 'item');
  const sw = swatch('rgba(47,111,208,0.35)');
  it.append(sw, 'mean processes in flight (line: peak)');
  lg.append(it);
}

function table(head, rows) {
  const t = el('table');
  const tr = el('tr');
  head.forEach((h) => tr.append(el('th', null, h)));
  t.append(tr);
  rows.forEach((r) => {
    const row = el('tr');
    r.forEach((c) => {
      const td = el('td');
      if (c instanceof Node) td.append(c); else td.textContent = c;
      row.append(td);
    });
    t.append(row);
  });
  return t;
}

function kpi(label, value) {
  const k = el('div', 'kpi');
  k.append(el('div', 'label', label), el('div', 'big', value));
  return k;
}

function badge(verdict) {
  const b = el('span', 'badge', verdict);
  b.style.background = VERDICT_COLORS[verdict] || '#999';
  return b;
}

// barChart draws bars into a canvas: values[], labels[], colour; `mark` draws a line at index.
function barChart(cv, values, labels, color, opts = {}) {
  const dpr = window.devicePixelRatio || 1;
  const W = cv.clientWidth || 400, H = cv.clientHeight || 150;
  cv.width = W * dpr;
  cv.height = H * dpr;
  const c = cv.getContext('2d');
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  c.font = '10.5px system-ui, sans-serif';
  const L = 38, B = 22, T = 8;
  const n = values.length, bw = (W - L - 6) / n;
  if (!values.some((v) => v > 0)) {
    c.fillStyle = '#6b7585';
    c.textAlign = 'center';
    c.fillText(opts.empty || 'nothing to show', W / 2, H / 2);
    return;
  }
  // y axis: a 1-2-5 step giving about 4 lines (whole numbers for counts), the top on a line
  const peak = Math.max(...values);
  const raw = peak / 4, p10 = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = [1, 2, 5, 10].map((m) => m * p10).find((s) => s >= raw);
  if (opts.integer) step = Math.max(1, Math.round(step));
  const max = Math.ceil(peak / step - 1e-9) * step;
  c.strokeStyle = '#dde1e7';
  c.fillStyle = '#6b7585';
  c.textBaseline = 'middle';
  for (let v = 0; v <= max + 1e-9; v += step) {
    const y = T + (H - B - T) * (1 - v / max);
    c.fillRect(L, Math.round(y), W - L - 6, 1);
    c.fillText(opts.fmt ? opts.fmt(v) : String(+v.toPrecision(3)), 2, y);
  }
  c.fillStyle = '#eef0f3';
  values.forEach((v, i) => {
    const h = (H - B - T) * v / max;
    c.fillStyle = typeof color === 'function' ? color(i) : color;
    c.fillRect(L + i * bw + 1, T + (H - B - T) - h, Math.max(1, bw - 2), h);
  });
  c.fillStyle = '#6b7585';
  c.textBaseline = 'top';
  labels.forEach((lab, i) => {
    if (lab == null) return;
    const x = L + i * bw + bw / 2 - c.measureText(lab).width / 2;
    c.fillText(lab, x, H - B + 5);
  });
  if (opts.mark != null) {
    c.fillStyle = '#1d2430';
    c.fillRect(Math.round(L + opts.mark * bw), T, 1, H - B - T);
  }
  if (opts.xlabel) {
    c.textAlign = 'right';
    c.fillText(opts.xlabel, W - 6, H - 11);
  }
}

function renderStats(stats) {
  const box = $('stats');
  box.textContent = '';
  if (S.compare) {
    const card = el('div', 'card wide');
    card.append(el('h3', null, 'Comparison: A vs B'));
    const k = el('div', 'kpis');
    const c = S.compare;
    k.append(kpi('span A', fmtTime(c.span_ns)), kpi('span B', fmtTime(c.compare_span_ns)),
      kpi('measured gain', fmtX(c.measured_gain)),
      kpi('predicted from A', fmtGain(c.predicted_gain_low, c.predicted_gain)),
      kpi('predicted at B\'s stretch', fmtX(c.predicted_gain_at_compare_stretch)),
      kpi('stretch A · B', `${fmtX(c.stretch)} · ${fmtX(c.compare_stretch)}`));
    card.append(k);
    card.append(el('div', 'kv', `${c.common_signatures} kernel signatures in common; median duration ratio A/B ${fmtX(c.duration_ratio)}`));
    if (c.compare_stretch != null)
      card.append(el('div', 'kv', `B's kernels took ${fmtX(c.compare_stretch)} their solo time; the prediction from A assumed solo speed side by side, ${fmtX(c.predicted_gain_at_compare_stretch)} at B's`));
    box.append(card);
  }
  stats.forEach((st, ri) => {
    const run = S.runs[ri];
    const card = el('div', 'card');
    card.append(el('h3', null, `${S.runs.length > 1 ? String.fromCharCode(65 + ri) + ' · ' : ''}${run.label}`));
    const s = run.summary;
    const k = el('div', 'kpis');
    k.append(kpi('kernels', s.kernels.toLocaleString()), kpi('span', fmtTime(s.span_ns)),
      kpi('overlap', fmtPct(s.span_ns ? s.overlap_ns / s.span_ns : null)),
      kpi('stretch', fmtX(s.stretch)),
      kpi(`MPS would gain${s.gain_basis === 'turns' ? ' (estimated)' : ''}`, fmtGain(s.predicted_gain_low, s.predicted_gain)),
      kpi('measured over', s.measure === 'range' ? 'the timed NVTX ranges' : s.measure === 'together' ? 'every process running' : 'the whole recording'));
    card.append(k);
    for (const line of run.headline || []) card.append(el('div', 'kv headline', line));
    for (const w of st.warnings) card.append(el('div', 'warn', w));
    card.append(el('h4', null, 'Processes'));
    card.append(table(['process', 'kernels', 'contexts', 'kernel time', 'busy', 'in overlap', 'stretch', 'MPS'],
      run.processes.map((p) => {
        const name = el('span');
        name.append(swatch(processColor(run, p.id)), ` pid ${p.pid}`);
        return [name, p.kernels.toLocaleString(), p.contexts, fmtTime(p.kernel_ns), fmtTime(p.busy_ns),
          fmtPct(p.busy_ns ? p.overlap_ns / p.busy_ns : null), fmtX(p.stretch), p.kernels ? mpsText(p.mps) : '–'];
      })));
    st.devices.forEach((sd) => {
      const d = run.lanes[sd.lane];
      const h = el('h4');
      h.append(`GPU ${sd.lane} · ${d.name || 'unknown'} `, badge(d.verdict));
      card.append(h);
      card.append(table(['busy', 'overlap', 'idle', 'peak procs · contexts', 'stretch', 'contexts in flight', 'parallelism', 'MPS would gain'],
        [[fmtTime(d.busy_ns), fmtTime(d.overlap_ns), fmtTime(d.idle_ns), `${d.max_processes} · ${d.max_contexts}`,
          fmtStretch(d.stretch, d.basis), d.contexts_in_flight == null ? '–' : d.contexts_in_flight.toFixed(2),
          d.parallelism == null ? '–' : d.parallelism.toFixed(2), d.gain_basis === 'none' ? '–' : fmtGain(d.predicted_gain_low, d.predicted_gain)]]));
      if (d.evidence) card.append(el('div', 'kv', d.evidence));
      const charts = el('div', 'charts');
      const lv = sd.ns_at_processes || [];
      const tot = lv.reduce((a, b) => a + b, 0) || 1;
      const c1 = el('canvas', 'chart');
      c1.dataset.kind = 'concurrency';
      const h1 = el('h4', null, 'Concurrency: share of time with N processes in flight');
      charts.append(h1, c1);
      const c2 = el('canvas', 'chart');
      c2.dataset.kind = 'stretch';
      charts.append(el('h4', null, 'Stretch histogram (duration / solo reference, log scale)'), c2);
      card.append(charts);
      requestAnimationFrame(() => {
        barChart(c1, lv.map((x) => x / tot), lv.map((_, i) => `${i}`), (i) => (i >= 2 ? '#2f6fd0' : i === 1 ? '#8fb3e8' : '#c5ccd6'),
          { fmt: (v) => `${Math.round(v * 100)}%`, xlabel: 'processes' });
        const hs = sd.stretch_histogram;
        if (hs) {
          const step = Math.log2(hs.hi / hs.lo) / hs.bins;
          const labels = hs.counts.map((_, i) => {
            const e = Math.log2(hs.lo) + i * step;
            return Math.abs(e - Math.round(e)) < 1e-9 ? `${+Math.pow(2, Math.round(e)).toPrecision(3)}` : null;
          });
          const one = -Math.log2(hs.lo) / step;
          barChart(c2, hs.counts, labels, (i) => (i < one ? '#59a14f' : '#f28e2b'), {
            mark: one, integer: true, fmt: (v) => (v >= 1e6 ? `${+(v / 1e6).toPrecision(3)}M` : v >= 1e4 ? `${+(v / 1e3).toPrecision(3)}k` : `${v}`), xlabel: '×',
            empty: `no kernel has a solo reference (${hs.no_reference} without): give --baseline FILES of a solo run`,
          });
        }
      });
    });
    box.append(card);
  });
}

// ------------------------------------------------------------------ start

async function main() {
  let meta;
  try {
    meta = await getJSON('api/runs');
  } catch (e) {
    showError(`Cannot read the runs: ${e.message}`);
    return;
  }
  S.verdicts = meta.verdicts;
  S.meanings = meta.verdict_meanings || [];
  S.rules = meta.rules || {};
  S.runs = meta.runs;
  S.compare = meta.compare;
  S.fullSpan = Math.max(1, ...S.runs.map((r) => r.summary.span_ns));
  const h = readHash();
  renderHeader();
  renderLegend();
  layout();
  if (isFinite(h.t0) && isFinite(h.t1) && h.t1 > h.t0) setView(h.t0, h.t1); else fitAll();
  clearTimeout(fetchTimer); // query now rather than after the debounce
  await fetchView();
  draw();
  S.ready = true;
  if (h.q) runFind();
  if (h.sel && h.sel.run < S.runs.length) showKernel(h.sel.run, h.sel.id);
  try {
    const stats = await Promise.all(S.runs.map((r, ri) => getStats(ri)));
    renderStats(stats);
  } catch (e) {
    showError(`Stats: ${e.message}`);
  }
  updateStatus();
}

function updateStatus() {
  const nsPerPx = (S.t1 - S.t0) / plotWidth();
  const modes = S.data.map((d) => {
    let k = 0, b = 0;
    for (const r of d.rows.values()) { if (r.mode === 'kernels') k++; else b++; }
    return `${k} rows as kernels, ${b} aggregated`;
  });
  $('status').textContent = `view ${fmtTime(S.t0, 6)} – ${fmtTime(S.t1, 6)} · ${fmtTime(nsPerPx)}/px · ${modes.join(' | ')} · last query ${S.lastQueryMs.toFixed(0)} ms · keys: +/− zoom, ←/→ pan, 0 fit, / find, drag on the ruler to zoom to a range`;
}

canvas.addEventListener('mousemove', onMove);
canvas.addEventListener('mouseleave', onLeave);
canvas.addEventListener('mousedown', onDown);
canvas.addEventListener('wheel', onWheel, { passive: false });
canvas.addEventListener('dblclick', (ev) => zoom(0.5, ev.clientX - canvas.getBoundingClientRect().left));
ruler.addEventListener('mousedown', onRulerDown);
ruler.addEventListener('wheel', onWheel, { passive: false });
window.addEventListener('mousemove', onDrag);
window.addEventListener('mouseup', onUp);
window.addEventListener('keydown', onKey);
window.addEventListener('resize', () => { resizeCanvases(); requestDraw(); scheduleFetch(); });
$('zoom-in').addEventListener('click', () => zoom(0.5));
$('zoom-out').addEventListener('click', () => zoom(2));
$('zoom-reset').addEventListener('click', fitAll);
$('colorby').addEventListener('change', (e) => { S.colorBy = e.target.value; renderLegend(); writeHash(); requestDraw(); });
$('find').addEventListener('input', scheduleFind);
$('find').addEventListener('keydown', (e) => { if (e.key === 'Enter') findStep(e.shiftKey ? -1 : 1); });
$('find-next').addEventListener('click', () => findStep(1));
$('find-prev').addEventListener('click', () => findStep(-1));
$('details-close').addEventListener('click', closeDetails);
window.addEventListener('hashchange', () => {
  const h = readHash();
  if (isFinite(h.t0) && isFinite(h.t1) && h.t1 > h.t0 && (Math.round(h.t0) !== Math.round(S.t0) || Math.round(h.t1) !== Math.round(S.t1))) setView(h.t0, h.t1);
});
setInterval(() => { if (S.ready) updateStatus(); }, 500);

window.tlview = S; // for the browser tests and the curious
main();
