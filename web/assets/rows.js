// rows.js: the vertical layout of the timeline (a band per run header, GPU lane, concurrency
// track, verdict strip and row: kernels of a stream, or a process's copies, API calls and NVTX
// ranges, tracks.js) and the time axis (timeToX/xToTime, setView, zoom, pan).
'use strict';

// ------------------------------------------------------------------ constants

const GUTTER = 230;        // px of labels at the left of the canvas
const RUN_H = 26;          // run header band
const LANE_H = 22;         // lane (GPU) header band
const CONC_H = 44;         // concurrency track
const VBAND_H = 10;        // overlap-verdict strip
const CAPTURE_H = 14;      // captured ranges (only for runs with captures)
const LANETAG_H = 16;      // a pinned lane's tag above its rows in the timeline
const PIN_GAP = 4;         // between two lanes' tracks on the pinned canvas
const PIN_CTL_W = 34;      // px of the pin control at the right of a lane header's label
const ROW_H = 18;          // one stream row
const LANE_GAP = 8;
const MIN_SPAN = 10;       // ns: the deepest zoom

// ------------------------------------------------------------------ coordinates

// plotWidth is the width of the time axis in CSS px. clientWidth is read once per frame, event
// or resize (cssWidth): reading it per bar forced a layout query per call and cost ~100 ms a frame.
let cssWidth = 0;
function plotWidth() {
  return Math.max(50, (cssWidth || canvas.clientWidth) - GUTTER);
}

// The view's axis is run A's (ns from its first kernel); run B's times are drawn shifted by
// S.shift[1] (align.js: B aligned on A). runShift is the shift of the run being drawn or hit
// tested, set by onRun() around each band (0 for what belongs to the view: ruler, range, hover).
let runShift = 0;

// onRun makes timeToX and xToTime map the times of run ri (-1: the view's own axis).
function onRun(ri) {
  runShift = ri >= 0 && S.shift ? S.shift[ri] || 0 : 0;
}

// timeToX maps ns (relative to the run's first kernel, see onRun) to a canvas x in CSS px.
function timeToX(t) {
  return GUTTER + (t + runShift - S.t0) * plotWidth() / (S.t1 - S.t0);
}

// xToTime maps a canvas x in CSS px to ns (relative, of the run set by onRun).
function xToTime(x) {
  return S.t0 + (x - GUTTER) * (S.t1 - S.t0) / plotWidth() - runShift;
}

// viewSpan is [first, last] ns of the view's axis that some run covers (runs shifted).
function viewSpan() {
  let lo = 0, hi = 1;
  S.runs.forEach((r, ri) => {
    const sh = (S.shift && S.shift[ri]) || 0;
    lo = Math.min(lo, sh);
    hi = Math.max(hi, sh + r.summary.span_ns);
  });
  return [lo, hi];
}

// setView changes the visible range (clamped), redraws and queries the server.
function setView(t0, t1) {
  let span = Math.max(MIN_SPAN, t1 - t0);
  const lim = S.fullSpan * 1.5 + 1e3;
  if (span > lim) span = lim;
  const c = (t0 + t1) / 2;
  t0 = c - span / 2;
  const [v0, v1] = viewSpan();
  const lo = v0 - S.fullSpan * 0.25 - 1e3, hi = v1 + S.fullSpan * 0.25 + 1e3;
  if (t0 < lo) t0 = lo;
  if (t0 + span > hi) t0 = hi - span;
  S.t0 = t0;
  S.t1 = t0 + span;
  hideTooltip(); // what it described has moved
  writeHash();
  requestDraw();
  scheduleFetch();
}

// zoom scales the view by factor about canvas x atX (the middle when not given).
function zoom(factor, atX) {
  const x = atX == null ? GUTTER + plotWidth() / 2 : atX;
  const t = xToTime(x);
  setView(t - (t - S.t0) * factor, t + (S.t1 - t) * factor);
}

// pan moves the view by a fraction of its length.
function pan(fraction) {
  const d = (S.t1 - S.t0) * fraction;
  setView(S.t0 + d, S.t1 + d);
}

// fitAll shows every run whole (as shifted), with a little room at both ends.
function fitAll() {
  const [v0, v1] = viewSpan(), pad = (v1 - v0) * 0.02;
  setView(v0 - pad, v1 + pad);
}

// ------------------------------------------------------------------ layout

// laneTracksH is the height of lane li of run ri's tracks (header, captures, concurrency, strip).
function laneTracksH(ri, li) {
  return LANE_H + ((S.runs[ri].captures || []).length ? CAPTURE_H : 0) + CONC_H + VBAND_H + PIN_GAP;
}

// layout computes the bands (run header, lane header, captures, concurrency, verdict strip, rows)
// and the canvases' heights: a pinned lane's tracks go to the pinned canvas (S.pinBands, arrange.js),
// a thin tag standing for them in the timeline above its rows; the rows as arrange.js orders them.
function layout() {
  if (!S.arrange) arrangeInit(null);
  pinDefaults(laneTracksH);
  const bands = [], pins = [];
  let y = 0, py = 0;
  S.runs.forEach((run, ri) => {
    if (S.runs.length > 1) { bands.push({ type: 'run', run: ri, y, h: RUN_H }); y += RUN_H; }
    run.lanes.forEach((lane, li) => {
      const pinned = isPinned(ri, li);
      const put = (type, h) => {
        if (pinned) { pins.push({ type, run: ri, lane: li, y: py, h, pinned: true }); py += h; }
        else { bands.push({ type, run: ri, lane: li, y, h }); y += h; }
      };
      put('lane', LANE_H);
      if ((run.captures || []).length) put('captures', CAPTURE_H);
      put('conc', CONC_H);
      put('vband', VBAND_H);
      if (pinned) {
        py += PIN_GAP;
        bands.push({ type: 'lanetag', run: ri, lane: li, y, h: LANETAG_H }); y += LANETAG_H;
      }
      const rowsY = y;
      let prevProc = -1;
      for (const rid of arrangeRows(ri, laneRows(ri, li))) { // by process, collapsed ones without tracks
        const row = run.rows[rid];
        const h = rowHeight(row);
        bands.push({ type: 'row', run: ri, lane: li, row: rid, y, h, first: row.process !== prevProc });
        prevProc = row.process;
        y += h;
      }
      bands.push({ type: 'laneend', run: ri, lane: li, y: rowsY, h: y - rowsY });
      y += LANE_GAP;
    });
  });
  S.bands = bands;
  S.pinBands = pins;
  S.height = Math.max(y, 60);
  S.pinHeight = py;
  resizeCanvases();
}

// resizeCanvases sizes the canvases' pixels to their CSS size and the device's pixel ratio, and
// keeps the ruler and the pinned canvas right under the header.
function resizeCanvases() {
  const dpr = window.devicePixelRatio || 1;
  cssWidth = canvas.clientWidth;
  const head = $('top').offsetHeight; // the header may wrap: keep the ruler right below it
  ruler.style.top = `${head}px`;
  pinned.style.top = `${head + ruler.offsetHeight}px`;
  const w = canvas.clientWidth;
  canvas.style.height = `${S.height}px`;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(S.height * dpr);
  pinned.hidden = !S.pinHeight;
  pinned.style.height = `${S.pinHeight || 0}px`;
  pinned.width = Math.round(w * dpr);
  pinned.height = Math.round((S.pinHeight || 1) * dpr);
  ruler.width = Math.round(ruler.clientWidth * dpr);
  ruler.height = Math.round(ruler.clientHeight * dpr);
}

// bandAt is the band at y (CSS px) of a canvas's bands (the timeline's by default).
function bandAt(y, bands = S.bands) {
  for (const b of bands) if (b.type !== 'laneend' && y >= b.y && y < b.y + b.h) return b;
  return null;
}
