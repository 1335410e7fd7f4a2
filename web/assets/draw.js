// draw.js: canvas drawing of the timeline: lanes, concurrency tracks (processes in flight and
// effective parallelism), verdict strips, stream rows (kernels, their stretched part hatched, or
// per-pixel aggregates, through one pixel layer), the captured ranges, the selected range, the
// ruler and the hover line.
'use strict';

// ------------------------------------------------------------------ drawing

// requestDraw draws at the next animation frame (once, however many ask before it). Until main()
// draws the first viewport (drawHeld), it does nothing: a frame drawn before the first answer
// would only hold up the one that shows it (main.js draws then, whatever asked meanwhile).
let drawPending = false;
let drawHeld = true;
function requestDraw() {
  if (drawPending || drawHeld) return;
  drawPending = true;
  requestAnimationFrame(() => { drawPending = false; draw(); });
}

// binEdges maps pixel j of an answer over [a.t0, a.t1) to its canvas x edges (answers may lag the
// view).
function binEdges(d, j) {
  const px = (d.t1 - d.t0) / d.width;
  return [timeToX(d.t0 + j * px), timeToX(d.t0 + (j + 1) * px)];
}

// draw draws the timeline's canvas (grid, overlap shading, rows through the pixel layer, names
// and marks, flows, lane bands), the selection, the pointer's line, then the pinned canvas and
// the ruler.
function draw() {
  onRun(-1);
  const dpr = window.devicePixelRatio || 1;
  const W = cssWidth = canvas.clientWidth;
  if (Math.round(W * dpr) !== canvas.width) resizeCanvases();
  ctx = mainCtx;
  surfH = S.height;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, S.height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  drawGrid();
  // overlap shading first, so that it tints the rows' background and not their kernels
  for (const b of S.bands) if (b.type === 'laneend') { onRun(b.run); drawOverlapShade(b, S.data[b.run]); }
  S.data.forEach((d, ri) => { // pixel edges of each answer on the current view, once per frame
    onRun(ri);
    const px = (d.t1 - d.t0) / d.width;
    if (!d.xs || d.xs.length !== d.width + 1) d.xs = new Float64Array(d.width + 1);
    for (let j = 0; j <= d.width; j++) d.xs[j] = timeToX(d.t0 + j * px);
  });
  layerBegin();
  for (const b of S.bands) if (b.type === 'row') { onRun(b.run); drawRow(b, S.runs[b.run], S.data[b.run], 'bars'); }
  layerEnd();
  for (const b of S.bands) if (b.type === 'row') { onRun(b.run); drawRow(b, S.runs[b.run], S.data[b.run], 'marks'); }
  drawFlows();
  for (const b of S.bands) {
    const run = S.runs[b.run];
    const d = S.data[b.run];
    onRun(b.run);
    switch (b.type) {
      case 'run': drawRunHeader(b, run); break;
      case 'lane': drawLaneHeader(b, run); break;
      case 'captures': drawCaptures(b, run); break;
      case 'conc': drawConc(b, run, d); break;
      case 'vband': drawVerdictStrip(b, d); break;
      case 'lanetag': drawLaneTag(b, run); break;
    }
  }
  onRun(-1);
  // gutter border
  ctx.fillStyle = '#dde1e7';
  ctx.fillRect(GUTTER - 1, 0, 1, S.height);
  drawRange();
  drawHover();
  drawPinned();
  drawRuler();
  S.drawCount++;
}

// drawPinned draws the pinned lanes' tracks (arrange.js) on their own canvas, which stays under
// the ruler while the timeline scrolls: the same drawing as in the timeline, with the selected
// range and the pointer's line across it.
function drawPinned() {
  if (!S.pinHeight) return;
  const dpr = window.devicePixelRatio || 1;
  if (pinned.width !== canvas.width || pinned.height !== Math.round(S.pinHeight * dpr)) resizeCanvases();
  ctx = pinCtx;
  surfH = S.pinHeight;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssWidth, surfH);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  drawGrid();
  for (const b of S.pinBands) {
    const run = S.runs[b.run], d = S.data[b.run];
    onRun(b.run);
    switch (b.type) {
      case 'lane': drawLaneHeader(b, run); break;
      case 'captures': drawCaptures(b, run); break;
      case 'conc': drawConc(b, run, d); break;
      case 'vband': drawVerdictStrip(b, d); break;
    }
  }
  onRun(-1);
  ctx.fillStyle = '#dde1e7';
  ctx.fillRect(GUTTER - 1, 0, 1, surfH);
  drawRange();
  drawHover();
  ctx = mainCtx;
  surfH = S.height;
}

// drawLaneTag stands in the timeline for a pinned lane's tracks, above its rows: which GPU the
// rows below belong to (a click unpins its tracks).
function drawLaneTag(b, run) {
  const lane = run.lanes[b.lane];
  ctx.fillStyle = '#eef1f5';
  ctx.fillRect(0, b.y, cssWidth, b.h);
  ctx.fillStyle = '#4b5565';
  ctx.font = '600 10.5px system-ui, sans-serif';
  ctx.fillText(`${S.runs.length > 1 ? `${runLetter(b.run)} · ` : ''}GPU ${lane.lane} · ${lane.name || 'unknown'}`, 10, b.y + b.h / 2);
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillStyle = '#8b94a3';
  ctx.fillText('its tracks are pinned on top · click to unpin', GUTTER + 8, b.y + b.h / 2);
  ctx.font = '11px system-ui, sans-serif';
}

// drawGrid draws the ruler's ticks as faint lines down the canvas being drawn, and the gutter.
function drawGrid() {
  const { step } = tickStep();
  ctx.fillStyle = '#f0f2f5';
  for (let t = Math.ceil(S.t0 / step) * step; t < S.t1; t += step) {
    const x = Math.round(timeToX(t));
    if (x > GUTTER) ctx.fillRect(x, 0, 1, surfH);
  }
  ctx.fillStyle = '#f7f8fa';
  ctx.fillRect(0, 0, GUTTER - 1, surfH);
}

// drawRunHeader draws a run's header band: its letter, label, counts, and how B is placed.
function drawRunHeader(b, run) {
  ctx.fillStyle = '#e8ecf2';
  ctx.fillRect(0, b.y, cssWidth, b.h);
  ctx.fillStyle = '#1d2430';
  ctx.font = '600 12px system-ui, sans-serif';
  const tag = `${runLetter(b.run)}  `;
  ctx.fillText(tag, 10, b.y + b.h / 2);
  ctx.fillText(ellipsisMiddle(run.label, GUTTER - 18 - ctx.measureText(tag).width), 10 + ctx.measureText(tag).width, b.y + b.h / 2);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#6b7585';
  const sh = S.shift[b.run] || 0;
  const shifted = sh ? ` · drawn ${sh > 0 ? '+' : '−'}${fmtTime(Math.abs(sh), 4)} from its first kernel${S.align ? `, aligned on ${S.align.what}` : ''}` : '';
  ctx.fillText(`${fmtCount(run.summary.kernels)} kernels · span ${fmtTime(run.summary.span_ns)}${shifted}`, GUTTER + 8, b.y + b.h / 2);
}

// drawLaneHeader draws a GPU's header: its name (with the run's letter when there are several), a
// pin control (arrange.js), its counts and its verdict pill, whose place is kept in the band for
// the hover and the click (the pill explains itself and opens the GPU's evidence).
function drawLaneHeader(b, run) {
  const lane = run.lanes[b.lane];
  ctx.fillStyle = '#1d2430';
  ctx.font = '600 11.5px system-ui, sans-serif';
  ctx.fillText(`${S.runs.length > 1 ? `${runLetter(b.run)} · ` : ''}GPU ${lane.lane} · ${lane.name || 'unknown'}`, 10, b.y + b.h / 2 + 1);
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillStyle = '#8b94a3';
  ctx.fillText(isPinned(b.run, b.lane) ? 'unpin' : 'pin', GUTTER - PIN_CTL_W, b.y + b.h / 2 + 1);
  ctx.font = '11px system-ui, sans-serif';
  const txt = `${plural(lane.processes, 'process', 'processes')} · ${plural(lane.contexts, 'context', 'contexts')} · ${plural(lane.kernels, 'kernel', 'kernels')} · ${mpsText(lane.mps)}`;
  ctx.fillStyle = '#6b7585';
  ctx.fillText(txt, GUTTER + 8, b.y + b.h / 2 + 1);
  const tw = ctx.measureText(txt).width;
  const vc = verdictColor(S.verdicts.indexOf(lane.verdict));
  ctx.fillStyle = vc;
  const pw = ctx.measureText(lane.verdict).width + 14;
  roundRect(GUTTER + 16 + tw, b.y + 4, pw, b.h - 8, 7);
  ctx.fill();
  b.pill = [GUTTER + 16 + tw, GUTTER + 16 + tw + pw];
  ctx.fillStyle = '#fff';
  ctx.font = '600 10.5px system-ui, sans-serif';
  ctx.fillText(lane.verdict, GUTTER + 23 + tw, b.y + b.h / 2 + 1);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#e3e6eb';
  ctx.fillRect(0, b.y, cssWidth, 1);
}

// drawCaptures marks the run's captured ranges (GET /api/runs "captures": what the collector
// recorded with TLVIEW_CAPTURE*, TLVIEW_FLIGHT or `tlview capture`) in a band of their own under
// the lane's header (so that no label is drawn over the header's text): a bar from start to end
// with its ends ticked, and its name where it fits.
function drawCaptures(b, run) {
  const caps = run.captures || [];
  if (!caps.length) return;
  ctx.fillStyle = '#9aa3b0';
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillText('captured', 22, b.y + b.h / 2);
  const y = b.y + b.h - 3;
  ctx.save();
  ctx.beginPath();
  ctx.rect(GUTTER, b.y, cssWidth - GUTTER, b.h);
  ctx.clip();
  ctx.font = '9.5px system-ui, sans-serif';
  for (const c of caps) {
    const x0 = Math.max(GUTTER - 2, timeToX(c.start)), x1 = Math.min(cssWidth + 2, timeToX(c.end));
    if (x1 < GUTTER || x0 > cssWidth) continue;
    ctx.fillStyle = CAPTURE_COLOR;
    ctx.fillRect(x0, y, Math.max(1, x1 - x0), 2);
    ctx.fillRect(x0, y - 4, 1, 6);
    ctx.fillRect(x1 - 1, y - 4, 1, 6);
    const label = c.name || 'captured';
    const w = ctx.measureText(label).width;
    if (x1 - x0 > w + 8) {
      ctx.fillStyle = '#fff';
      ctx.fillRect(x0 + 3, y - 11, w + 4, 10);
      ctx.fillStyle = CAPTURE_COLOR;
      ctx.fillText(label, x0 + 5, y - 6);
    }
  }
  ctx.restore();
}

// roundRect traces a rectangle with rounded corners (radius r) as the current path.
function roundRect(x, y, w, h, r) {
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

// laneData is the viewport answer's lane of band b (null before the answer).
function laneData(d, b) {
  return d && d.lanes ? d.lanes.find((l) => l.lane === b.lane) : null;
}

// concTop is the scale of a lane's concurrency track: the most processes or contexts it had in
// flight at once, or the most solo work per ns a window did (par_max, rounded up: green contexts
// or streams side by side put it above the processes in flight), at least 1, so that neither
// area is ever clipped.
function concTop(lane) {
  return Math.max(1, lane.max_processes || 0, lane.max_contexts || 0, Math.ceil((lane.par_max || 0) - 1e-9));
}

// drawConc draws the concurrency track: mean processes in flight (light area), their peak (line)
// and the effective parallelism (dark area): solo work done per ns, so that time-slicing (4 in
// flight, parallelism ~1) and side by side (4 and ~4) differ at a glance. Its scale (concTop)
// and what it counts are written in the gutter.
function drawConc(b, run, d) {
  const lane = run.lanes[b.lane];
  const top = concTop(lane);
  ctx.fillStyle = '#6b7585';
  ctx.fillText(`concurrency, 0–${top}`, 22, b.y + b.h / 2 - 7);
  ctx.fillStyle = '#9aa3b0';
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillText('processes in flight · parallelism', 22, b.y + b.h / 2 + 6);
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
  if (L.par) drawParallelism(L, d, yOf);
  ctx.beginPath();
  started = false;
  for (let j = 0; j < d.width; j++) {
    const [x0, x1] = binEdges(d, j);
    if (x1 < GUTTER || x0 > cssWidth) continue;
    const y = Math.round(yOf(L.conc_max[j])) + 0.5; // on a pixel row: crisp
    if (!started) { ctx.moveTo(Math.max(GUTTER, x0), y); started = true; } else ctx.lineTo(Math.max(GUTTER, x0), y);
    ctx.lineTo(x1, y);
  }
  ctx.strokeStyle = '#2f5fa8';
  ctx.lineWidth = 1;
  ctx.stroke();
}

// drawParallelism fills the effective parallelism of each pixel (null: not known there, drawn as
// a gap) in the concurrency track, over the processes in flight.
function drawParallelism(L, d, yOf) {
  ctx.beginPath();
  let open = false, xe = 0;
  for (let j = 0; j < d.width; j++) {
    const x0 = Math.max(GUTTER, d.xs[j]), x1 = Math.min(cssWidth, d.xs[j + 1]);
    const v = L.par[j];
    if (x1 < GUTTER || x0 > cssWidth || v == null) {
      if (open) { ctx.lineTo(xe, yOf(0)); ctx.closePath(); open = false; }
      continue;
    }
    if (!open) { ctx.moveTo(x0, yOf(0)); open = true; }
    ctx.lineTo(x0, yOf(v));
    ctx.lineTo(x1, yOf(v));
    xe = x1;
  }
  if (open) { ctx.lineTo(xe, yOf(0)); ctx.closePath(); }
  ctx.globalAlpha = 0.8;
  ctx.fillStyle = PAR_COLOR;
  ctx.fill();
  ctx.globalAlpha = 1;
}

// overlapSpans yields [x0, x1, verdict] of overlap windows in view: exact windows when the server
// listed them, else runs of equal per-pixel verdicts where the pixels hold overlap (a took-turns
// window is time-sliced with an overlap share of 0: no overlap window, turnSpans draws it).
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
    const ov = v >= 2 && L.overlap[j] > 0;
    if (j0 >= 0 && (!ov || v !== L.verdict[j0])) {
      out.push([binEdges(d, j0)[0], binEdges(d, j - 1)[1], L.verdict[j0], -1]);
      j0 = -1;
    }
    if (ov && j0 < 0) j0 = j;
  }
  return out;
}

// turnSpans yields [x0, x1, window id, switches] of the took-turns windows in view (contexts
// without MPS that switched without overlapping): the server's list, else runs of pixels that
// are time-sliced without overlap (id -1, switches unknown).
function turnSpans(d, L) {
  const out = [];
  if (!L) return out;
  if (L.turns) {
    for (const w of L.turns) out.push([timeToX(w[1]), timeToX(w[2]), w[0], w[3]]);
    return out;
  }
  if (L.nturns === 0 || !L.overlap) return out;
  let j0 = -1;
  for (let j = 0; j <= d.width; j++) {
    const tt = j < d.width && L.verdict[j] === 3 && L.overlap[j] === 0;
    if (j0 >= 0 && !tt) { out.push([binEdges(d, j0)[0], binEdges(d, j - 1)[1], -1, -1]); j0 = -1; }
    if (tt && j0 < 0) j0 = j;
  }
  return out;
}

// drawVerdictStrip draws a lane's overlap windows in their verdicts' colours and its took-turns
// windows as what they are: a dotted line along the strip's foot over the window, and at each
// of its context switches a tick where the next context's kernel started, its idle gap before it
// a thin line; the time between them is left as it was (a context alone, or idle). Switches
// inside overlap windows are not marked: the window's colour says what happened there. When the switches
// in view are too many to list, the strip says how many.
function drawVerdictStrip(b, d) {
  ctx.fillStyle = '#eef0f3';
  ctx.fillRect(GUTTER, b.y + 1, cssWidth - GUTTER, b.h - 2);
  const L = laneData(d, b);
  for (const [x0, x1, v] of overlapSpans(d, L)) {
    ctx.fillStyle = verdictColor(v);
    ctx.fillRect(Math.max(GUTTER, x0), b.y + 1, Math.max(1.5, Math.min(x1, cssWidth) - Math.max(GUTTER, x0)), b.h - 2);
  }
  const turns = turnSpans(d, L);
  ctx.fillStyle = TURN_COLOR;
  for (const [x0, x1] of turns) {
    for (let x = Math.max(GUTTER, x0); x < Math.min(x1, cssWidth); x += 4) ctx.fillRect(x, b.y + b.h - 3, 2, 2);
  }
  if (turns.length && L.switches) {
    for (const [t, gap] of L.switches) { // the idle gap a thin line, the handover a tick
      const xa = timeToX(t - gap), xb = timeToX(t);
      if (!turns.some(([x0, x1]) => xb >= x0 - 0.5 && xa <= x1 + 0.5)) continue; // not a took-turns window's
      if (xb < GUTTER - 2 || xa > cssWidth) continue;
      if (xb - xa > 2) ctx.fillRect(Math.max(GUTTER, xa), b.y + b.h / 2 - 0.5, Math.min(xb, cssWidth) - Math.max(GUTTER, xa), 1);
      if (xb >= GUTTER) ctx.fillRect(xb - 1, b.y + 1, 2, b.h - 2);
    }
  } else if (turns.length && L.nswitches) { // too many to list: where there is room, how many
    ctx.font = '9.5px system-ui, sans-serif';
    for (const [x0, x1, , n] of turns) {
      const a = Math.max(GUTTER, x0), e = Math.min(cssWidth, x1);
      const txt = n >= 0 ? `${fmtCount(n)} context switches here: zoom in to place them` : 'contexts took turns here: zoom in to place their switches';
      if (e - a > ctx.measureText(txt).width + 8) ctx.fillText(txt, a + 4, b.y + b.h / 2 - 1);
    }
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

// rowLabel is a row's gutter text: its process (head) and its stream or thread (sub).
function rowLabel(run, row) {
  const p = run.processes[row.process];
  return {
    head: `${processMark(S.runs.indexOf(run), row.process)}${pidText(p)}${p.mps === 'on' ? ' · MPS' : ''}`,
    sub: isTrack(row) ? trackLabel(row) : `ctx ${row.context} · stream ${row.stream}`,
  };
}

// ------------------------------------------------------------------ pixel layer
// Kernel bars and per-pixel bars are written into one ImageData and composited once per frame:
// tens of thousands of canvas rectangles cost ~100 ms in a software-rendered canvas, this ~5 ms.
const layer = { canvas: document.createElement('canvas'), img: null, u32: null, w: 0, h: 0, dpr: 1, used: false };

// layerBegin readies the pixel layer for a frame: sized as the canvas, cleared when used.
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

// layerHatch fills a rectangle as layerRect does with diagonal stripes of px over bg: the part of
// a kernel beyond its solo reference.
function layerHatch(x, y, w, h, px, bg) {
  const d = layer.dpr;
  const x0 = Math.max(0, Math.floor(x * d)), x1 = Math.min(layer.w, Math.max(x0 + 1, Math.round((x + w) * d)));
  const y0 = Math.max(0, Math.round(y * d)), y1 = Math.min(layer.h, Math.round((y + h) * d));
  const u = layer.u32, W = layer.w, period = Math.max(4, Math.round(5 * d)), band = Math.max(2, Math.round(2 * d));
  for (let yy = y0; yy < y1; yy++) {
    const row = yy * W;
    u.fill(bg, row + x0, row + x1);
    // stripes where (x + y) % period < band: the first one at or left of x0, then every period
    for (let xs = x0 - ((x0 + yy) % period); xs < x1; xs += period) {
      for (let xx = Math.max(xs, x0), e = Math.min(xs + band, x1); xx < e; xx++) u[row + xx] = px;
    }
  }
  layer.used = true;
}

// layerEnd puts the pixel layer's frame onto the canvas, in one drawImage.
function layerEnd() {
  if (!layer.used) return;
  layer.canvas.getContext('2d').putImageData(layer.img, 0, 0);
  ctx.drawImage(layer.canvas, 0, 0, layer.w / layer.dpr, layer.h / layer.dpr);
}

// drawRow draws one stream row: in phase 'bars' its label and its kernels or per-pixel bars
// (into the pixel layer), in phase 'marks' the names on wide kernels, highlights and find marks.
function drawRow(b, run, d, phase) {
  const row = run.rows[b.row];
  if (isTrack(row)) { drawTrack(b, run, d, phase); return; }
  const pc = processColor(run, row.process);
  const R = d && d.rows.get(b.row);
  const y0 = b.y + 2, h = b.h - 4;
  const W = cssWidth;
  const hl = S.find.launches[b.run];
  if (phase === 'bars') {
    drawRowLabel(b, run, row, pc);
    if (!R) return;
    if (R.mode === 'kernels') {
      // each kernel's pixels: its verdict's or its process's, plain, dimmed or light (the
      // stretched part), looked up once per row instead of colour strings per kernel
      const byV = S.colorBy === 'verdict';
      const vp = byV ? verdictPixels(0) : null, vd = byV ? verdictPixels(1) : null, vl = byV ? verdictPixels(2) : null;
      const pp = rgba32(pc), pd = rgba32(dim(pc)), pl = rgba32(light(pc));
      for (let i = 0; i < R.s.length; i++) {
        let x0 = timeToX(R.s[i]), x1 = timeToX(R.s[i] + R.d[i]);
        if (x1 < GUTTER || x0 > W) continue;
        x0 = Math.max(GUTTER, x0);
        x1 = Math.min(W, x1);
        const dimmed = hl && hl.size && !hl.has(R.l[i]);
        const px = byV ? (dimmed ? vd : vp)[R.v[i]] : dimmed ? pd : pp;
        // a one-pixel gap keeps back-to-back kernels apart when they are wide enough
        const w = Math.max(1 / layer.dpr, x1 - x0 - (x1 - x0 > 4 ? 1 : 0));
        // the kernel's solo reference length (duration / stretch) solid, the rest hatched
        const xr = R.x[i] > 1 && !dimmed ? timeToX(R.s[i] + R.d[i] / R.x[i]) : Infinity;
        if (xr < x0 + w - 1) {
          if (xr > x0) layerRect(x0, y0, xr - x0, h, px);
          const xh = Math.max(x0, xr);
          layerHatch(xh, y0, x0 + w - xh, h, px, byV ? vl[R.v[i]] : pl);
        } else {
          layerRect(x0, y0, w, h, px);
        }
      }
    } else {
      const xs = d.xs, dimmed = !!(hl && hl.size);
      // the pixels' colours as layer pixels, looked up once (not a string per pixel)
      const vp = S.colorBy === 'verdict' ? verdictPixels(dimmed ? 1 : 0) : null;
      const ppx = rgba32(dimmed ? dim(pc) : pc);
      for (let j = 0; j < d.width; j++) {
        if (!R.count[j]) continue;
        const x0 = xs[j], x1 = xs[j + 1];
        if (x1 < GUTTER || x0 > W) continue;
        const bh = Math.max(2, h * R.busy[j] / 1000);
        const xa = Math.max(GUTTER, x0);
        layerRect(xa, y0 + h - bh, Math.max(1 / layer.dpr, x1 - xa), bh, vp ? vp[R.verdict[j] < 0 ? 1 : R.verdict[j]] : ppx);
      }
    }
    return;
  }
  if (!R) return;
  if (R.mode === 'kernels') {
    for (let i = 0; i < R.s.length; i++) {
      const x0 = Math.max(GUTTER, timeToX(R.s[i])), x1 = Math.min(W, timeToX(R.s[i] + R.d[i]));
      const w = x1 - x0;
      const hit = hl && hl.has(R.l[i]);
      const sel = S.selected && S.selected.run === b.run && S.selected.id === R.id[i];
      if (x1 < GUTTER || x0 > W || (w <= 46 && !hit && !sel)) continue;
      if (w > 46) {
        ctx.fillStyle = inkOn(kernelColor(R, i, pc));
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

// kernelColor is the colour of kernel i of a row listed kernel by kernel: its verdict's or its
// process's (pc).
function kernelColor(R, i, pc) {
  return S.colorBy === 'verdict' ? verdictColor(R.v[i]) : pc;
}

// drawRowLabel draws a row's label in the gutter: its process (with its colour) on its first
// row, its stream or thread, and the row's controls while the pointer is over it.
function drawRowLabel(b, run, row, pc) {
  if (b.first) {
    ctx.fillStyle = '#e3e6eb';
    ctx.fillRect(0, b.y, cssWidth, 1);
  }
  const lab = rowLabel(run, row);
  if (b.first) {
    ctx.fillStyle = pc;
    ctx.fillRect(10, b.y + 4, 8, Math.min(b.h, ROW_H) - 8);
    ctx.fillStyle = '#1d2430';
    ctx.font = '600 11px system-ui, sans-serif';
    ctx.fillText(lab.head, 24, b.y + Math.min(b.h, ROW_H) / 2);
    const hw = ctx.measureText(lab.head).width;
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#6b7585';
    ctx.fillText(lab.sub, 30 + hw, b.y + Math.min(b.h, ROW_H) / 2);
  } else {
    ctx.fillStyle = '#6b7585';
    ctx.fillText(lab.sub, 30 + 60, b.y + Math.min(b.h, ROW_H) / 2);
  }
  if (S.hover && S.hover.h && S.hover.h.band === b && S.hover.x == null) drawRowControls(b);
}

// ellipsisMiddle fits text into w px by cutting its middle (a third of what is kept from the head,
// the rest from the tail), so that labels which differ at their end stay apart.
function ellipsisMiddle(text, w) {
  if (ctx.measureText(text).width <= w) return text;
  const cut = (n) => `${text.slice(0, Math.ceil(n / 3))}…${text.slice(text.length - (n - Math.ceil(n / 3)))}`;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(cut(mid)).width <= w) lo = mid; else hi = mid - 1;
  }
  return lo > 0 ? cut(lo) : '';
}

// ellipsis fits text into w px by cutting its end (the canvas's current font).
function ellipsis(text, w) {
  if (ctx.measureText(text).width <= w) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${text.slice(0, mid)}…`).width <= w) lo = mid; else hi = mid - 1;
  }
  return lo > 0 ? `${text.slice(0, lo)}…` : '';
}

// tickStep picks a 1-2-5 step giving ticks about 110 px apart, and how to label them: in the
// unit of the view's position when three decimals tell the ticks apart ("19.5 ms"); else the
// first tick in full ("2.242496 ms") and the others as offsets from it in the step's unit ("+20
// ns"), so a label never reads "2242496 ns".
function tickStep() {
  const nsPerPx = (S.t1 - S.t0) / plotWidth();
  const raw = nsPerPx * 110;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const unit = timeUnit(Math.max(Math.abs(S.t0), Math.abs(S.t1)));
  const digits = unitDigits(step, unit);
  return { step, unit, digits, offset: digits > 3 };
}

// timeUnit is the unit [ns per unit, name] that suits a time or duration v (ns).
function timeUnit(v) {
  return v < 1e3 ? [1, 'ns'] : v < 1e6 ? [1e3, 'µs'] : v < 1e9 ? [1e6, 'ms'] : [1e9, 's'];
}

// unitDigits is the number of decimals that tell multiples of step apart in unit u.
function unitDigits(step, u) {
  return Math.max(0, Math.ceil(-Math.log10(step / u[0]) - 1e-9));
}

// tickLabel writes time t (ns) in unit u with the given decimals ("-0" written "0").
function tickLabel(t, u, digits) {
  const v = (t / u[0]).toFixed(digits);
  return `${Number(v) === 0 ? v.replace('-', '') : v} ${u[1]}`;
}

// drawRuler draws the ruler: the view's length, the ticks and their labels, a ruler drag and
// the selection's length.
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
  const { step, unit, digits, offset } = tickStep();
  rctx.fillStyle = '#1d2430';
  S.rulerLabels.length = 0;
  let base = null;
  for (let t = Math.ceil(S.t0 / step) * step; t < S.t1; t += step) {
    const x = Math.round(timeToX(t));
    if (x <= GUTTER) continue;
    rctx.fillRect(x, H - 8, 1, 8);
    let label;
    if (!offset || base === null) {
      label = tickLabel(t, unit, digits);
      base = t;
    } else {
      const u = timeUnit(t - base);
      label = `+${tickLabel(t - base, u, unitDigits(step, u))}`;
    }
    S.rulerLabels.push(label);
    rctx.fillText(label, x + 4, H / 2 - 2);
    for (let k = 1; k < 5; k++) {
      const xm = Math.round(timeToX(t + k * step / 5));
      if (xm > GUTTER && xm < W) rctx.fillRect(xm, H - 4, 1, 4);
    }
  }
  if (drag && drag.ruler) {
    rctx.fillStyle = 'rgba(47,111,208,0.25)';
    rctx.fillRect(Math.min(drag.x0, drag.x1), 0, Math.abs(drag.x1 - drag.x0), H);
  }
  drawRangeLabel(W, H);
  rctx.fillStyle = '#dde1e7';
  rctx.fillRect(GUTTER - 1, 0, 1, H);
}

// rangeSpans is what the selection covers of the canvas being drawn, as [y0, y1] spans: all of
// it for a time range; for an area (a range over some rows: S.range.rows) its rows' bands on the
// timeline, those next to each other joined, and nothing on the pinned canvas.
function rangeSpans() {
  if (!S.range.rows) return [[0, surfH]];
  if (ctx !== mainCtx) return [];
  const want = new Set(S.range.rows.map((r) => `${r.run}.${r.row}`)), out = [];
  for (const b of S.bands) {
    if (b.type !== 'row' || !want.has(`${b.run}.${b.row}`)) continue;
    const last = out[out.length - 1];
    if (last && Math.abs(last[1] - b.y) < 1) last[1] = b.y + b.h; else out.push([b.y, b.y + b.h]);
  }
  return out;
}

// drawRange shades the selection (a time range, or an area: a range over some rows) on the
// canvas being drawn and marks its edges; an area is outlined.
function drawRange() {
  if (!S.range) return;
  const xa = timeToX(S.range.t0), xb = timeToX(S.range.t1);
  const x0 = Math.max(GUTTER, xa), x1 = Math.min(cssWidth, xb);
  if (x1 < GUTTER || x0 > cssWidth) return;
  for (const [y0, y1] of rangeSpans()) {
    ctx.fillStyle = 'rgba(43,49,64,0.10)';
    ctx.fillRect(x0, y0, Math.max(1, x1 - x0), y1 - y0);
    ctx.fillStyle = PAR_COLOR;
    if (xa >= GUTTER) ctx.fillRect(Math.round(xa), y0, 1, y1 - y0);
    if (xb <= cssWidth) ctx.fillRect(Math.round(xb), y0, 1, y1 - y0);
    if (S.range.rows) {
      ctx.fillRect(x0, Math.round(y0), Math.max(1, x1 - x0), 1);
      ctx.fillRect(x0, Math.round(y1) - 1, Math.max(1, x1 - x0), 1);
    }
  }
}

// drawRangeLabel writes the selected range's duration on the ruler, centred over it.
function drawRangeLabel(W, H) {
  if (!S.range) return;
  const x0 = Math.max(GUTTER, timeToX(S.range.t0)), x1 = Math.min(W, timeToX(S.range.t1));
  if (x1 < GUTTER || x0 > W) return;
  rctx.fillStyle = 'rgba(43,49,64,0.14)';
  rctx.fillRect(x0, 0, Math.max(1, x1 - x0), H);
  const txt = fmtTime(S.range.t1 - S.range.t0, 4);
  rctx.font = '600 11px system-ui, sans-serif';
  const tw = rctx.measureText(txt).width + 12;
  const cx = Math.min(W - tw / 2 - 2, Math.max(GUTTER + tw / 2 + 2, (x0 + x1) / 2));
  rctx.fillStyle = PAR_COLOR;
  rctx.fillRect(cx - tw / 2, 4, tw, H - 10);
  rctx.fillStyle = '#fff';
  rctx.fillText(txt, cx - tw / 2 + 6, H / 2 - 1);
  rctx.font = '11px system-ui, sans-serif';
}

// drawHover draws the pointer's vertical line across the canvas being drawn.
function drawHover() {
  if (!S.hover || S.hover.x == null) return;
  ctx.fillStyle = 'rgba(29,36,48,0.35)';
  ctx.fillRect(Math.round(S.hover.x), 0, 1, surfH);
}
