// input.js: the page's input: the view in the URL hash, hit testing, hover, click, drag, wheel and
// keys, in Perfetto's manner: plain wheel scrolls the page, ctrl+wheel (a trackpad's pinch)
// zooms at the pointer, shift+wheel or a sideways swipe pans; W/S zoom, A/D pan (and +/-,
// arrows); drag on the timeline selects a range (shift+drag pans), drag on the ruler zooms to
// what it covers; F fits the selection, Esc clears it, ? opens the help.
'use strict';

// ------------------------------------------------------------------ URL state

// writeHash puts the view and the selections in the URL's hash (web/API.md), without a new
// history entry.
function writeHash() {
  const p = new URLSearchParams();
  p.set('t0', Math.round(S.t0));
  p.set('t1', Math.round(S.t1));
  if (S.colorBy !== S.colorDefault) p.set('color', S.colorBy);
  if (S.find.q) p.set('q', S.find.q);
  if (S.selected) p.set('sel', `${S.selected.run}:${S.selected.id}`);
  if (S.item) p.set('item', `${S.item.kind}:${S.item.run}:${S.item.id}`);
  if (S.range) p.set('range', `${Math.round(S.range.t0)},${Math.round(S.range.t1)}`);
  if (S.range && S.range.rows) p.set('area', S.range.rows.map((r) => `${r.run}.${r.row}`).join(','));
  arrangeHash(p);
  if (S.shift[1]) p.set('shift', Math.round(S.shift[1]));
  history.replaceState(null, '', `#${p.toString()}`);
}

// readHash reads the URL's hash: the view, the colouring, the search, the selections and the
// arrangement (colour and search are set at once, the rest returned).
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const t0 = parseFloat(p.get('t0')), t1 = parseFloat(p.get('t1'));
  const color = p.get('color');
  if (color === 'verdict' || color === 'process') S.colorBy = color;
  $('colorby').value = S.colorBy;
  const q = p.get('q');
  if (q) { $('find').value = q; }
  const sel = /^(\d+):(\d+)$/.exec(p.get('sel') || '');
  const item = /^(copy|api|nvtx):(\d+):(\d+)$/.exec(p.get('item') || '');
  const range = /^(-?\d+),(-?\d+)$/.exec(p.get('range') || '');
  const shift = /^-?\d+$/.exec(p.get('shift') || '');
  if (shift) { S.shift = [0, +shift[0]]; S.align = { how: 'drag', what: 'from the URL' }; }
  const area = (p.get('area') || '').split(',').map((x) => /^(\d+)\.(\d+)$/.exec(x)).filter(Boolean).map((m) => ({ run: +m[1], row: +m[2] }));
  return {
    t0, t1, q, sel: sel ? { run: +sel[1], id: +sel[2] } : null,
    item: item ? { kind: item[1], run: +item[2], id: +item[3] } : null,
    range: range && +range[2] > +range[1] ? { t0: +range[1], t1: +range[2], rows: area.length ? area : null } : null,
    ...arrangeReadHash(p),
  };
}

// ------------------------------------------------------------------ hover, click

// surfaceBands is the bands of the canvas an event came from: the pinned one's, or the timeline's.
function surfaceBands(el) {
  return el === pinned ? S.pinBands : S.bands;
}

// hitTest finds what lies under point (x, y) of a canvas (of its bands: the timeline's by
// default): in the band there, at the time of its run.
function hitTest(x, y, bands = S.bands) {
  const b = bandAt(y, bands);
  onRun(b ? b.run : -1);
  try {
    return hitBand(b, x, y);
  } finally {
    onRun(-1);
  }
}

// hitBand is hitTest's work for band b (times read with b's run's shift).
function hitBand(b, x, y) {
  if (b && x < GUTTER && b.type === 'row') { // the row's controls (arrange.js), its process's toggle
    const ctl = rowControl(x);
    if (ctl) return { band: b, rowctl: ctl };
    if (b.first && hasTracks(b.run, S.runs[b.run].rows[b.row].process)) return { band: b, toggle: true };
  }
  if (b && ((b.type === 'lane' && x < GUTTER && x >= GUTTER - PIN_CTL_W - 4) || b.type === 'lanetag')) return { band: b, pin: true };
  if (b && b.type === 'lane' && b.pill && x >= b.pill[0] && x <= b.pill[1]) return { band: b, pill: true };
  if (!b || x < GUTTER) return b ? { band: b } : null;
  const d = S.data[b.run];
  const run = S.runs[b.run];
  if (!d) return { band: b };
  const t = xToTime(x);
  const j = Math.floor((t - d.t0) * d.width / (d.t1 - d.t0));
  if (b.type === 'row') {
    const R = d.rows.get(b.row);
    if (!R) return { band: b };
    if (isTrack(run.rows[b.row])) return hitTrack(b, R, t, y, j, d);
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
  if (b.type === 'captures') {
    const c = (run.captures || []).find((x) => t >= x.start && t < x.end);
    return c ? { band: b, capture: c } : { band: b };
  }
  if (b.type === 'conc' || b.type === 'vband') {
    const L = laneData(d, b);
    if (!L) return { band: b };
    if (L.windows) {
      for (const w of L.windows) if (t >= w[1] && t < w[2]) return { band: b, window: w, L, j };
    }
    if (L.turns) {
      for (const w of L.turns) if (t >= w[1] && t < w[2]) return { band: b, turn: w, L, j };
    }
    if (j >= 0 && j < d.width) return { band: b, lanebin: j, L };
  }
  return { band: b };
}

// onMove follows the pointer over a canvas: what is under it (its tooltip) and the line.
function onMove(ev) {
  const r = ev.currentTarget.getBoundingClientRect();
  const x = ev.clientX - r.left, y = ev.clientY - r.top;
  if (drag) return;
  const h = hitTest(x, y, surfaceBands(ev.currentTarget));
  S.hover = { x: x >= GUTTER ? x : null, h };
  pointerAt = x >= GUTTER ? x : null;
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

// onLeave forgets the pointer when it leaves a canvas.
function onLeave() {
  pointerAt = null;
  hideTooltip();
  requestDraw();
}

// onClick acts on what was clicked: a row's control, a pin, a verdict pill, a process's toggle,
// a kernel, record or window (its details), an aggregated pixel (zoom onto it).
function onClick(ev) {
  const r = ev.target.getBoundingClientRect();
  const h = hitTest(ev.clientX - r.left, ev.clientY - r.top, surfaceBands(ev.target));
  if (!h) return;
  if (h.rowctl) rowAction(h.band.run, h.band.row, h.rowctl);
  else if (h.pin) togglePin(h.band.run, h.band.lane);
  else if (h.pill) showLane(h.band.run, h.band.lane);
  else if (h.toggle) toggleProcess(h.band.run, S.runs[h.band.run].rows[h.band.row].process);
  else if (h.kernel != null) showKernel(h.band.run, h.R.id[h.kernel]);
  else if (h.item != null) showItem(h.band.run, ITEM_OF_KIND[h.row.kind], h.R.id[h.item]);
  else if (h.window) showWindow(h.band.run, h.window[0]);
  else if (h.turn) showWindow(h.band.run, h.turn[0]);
  else if (h.bin != null) { // zoom onto the clicked pixel's neighbourhood
    const t = xToTime(ev.clientX - r.left);
    const span = (S.t1 - S.t0) / 8;
    setView(t - span / 2, t + span / 2);
  } else if (h.trackBin != null) {
    const t = xToTime(ev.clientX - r.left);
    const span = (S.t1 - S.t0) / 8;
    setView(t - span / 2, t + span / 2);
  }
}

// ------------------------------------------------------------------ select, pan, zoom, keys

let drag = null; // a press on the timeline or the ruler, until it is released

// onDown starts a drag on the timeline or the pinned tracks: an area selection (the range and
// the rows it crosses, when it starts on a row), a range selection (elsewhere), or a pan with
// shift held.
function onDown(ev) {
  if (ev.button !== 0) return;
  const surf = ev.currentTarget, r = surf.getBoundingClientRect();
  const x = ev.clientX - r.left, b = bandAt(ev.clientY - r.top, surfaceBands(surf));
  if (alignDragStart(ev, b)) return;
  drag = { x: ev.clientX, t0: S.t0, t1: S.t1, moved: false, pan: ev.shiftKey, ta: xToTime(Math.max(GUTTER, x)),
    surf, y0: ev.clientY - r.top, area: surf === canvas && b && b.type === 'row' };
  surf.classList.add(drag.pan ? 'dragging' : 'selecting');
}

// areaRows lists the rows an area drag crosses on the timeline, from y0 to y1 (CSS px).
function areaRows(y0, y1) {
  const lo = Math.min(y0, y1), hi = Math.max(y0, y1);
  return S.bands.filter((b) => b.type === 'row' && b.y + b.h > lo && b.y <= hi).map((b) => ({ run: b.run, row: b.row }));
}

// onDrag follows a drag: B shifted by hand, a ruler zoom, a pan, or the selection growing.
function onDrag(ev) {
  if (!drag) return;
  if (drag.align) { alignDragMove(ev); return; }
  if (drag.ruler) {
    drag.x1 = ev.clientX - ruler.getBoundingClientRect().left;
    requestDraw();
    return;
  }
  const dx = ev.clientX - drag.x;
  if (Math.abs(dx) > 2) drag.moved = true;
  if (!drag.moved) return;
  if (drag.pan) {
    const dt = dx * (drag.t1 - drag.t0) / plotWidth();
    setView(drag.t0 - dt, drag.t1 - dt);
    return;
  }
  const r = drag.surf.getBoundingClientRect();
  const x = ev.clientX - r.left;
  const tb = xToTime(Math.min(cssWidth, Math.max(GUTTER, x)));
  S.range = { t0: Math.min(drag.ta, tb), t1: Math.max(drag.ta, tb) };
  if (drag.area) S.range.rows = areaRows(drag.y0, Math.min(S.height, Math.max(0, ev.clientY - r.top)));
  hideTooltip();
  requestDraw();
}

// onUp ends a drag: the selection made, the ruler zoom done, or a click when it did not move.
function onUp(ev) {
  if (!drag) return;
  const d = drag;
  drag = null;
  canvas.classList.remove('dragging', 'selecting');
  pinned.classList.remove('dragging', 'selecting');
  if (d.align) { alignDragEnd(d); return; }
  if (d.ruler) {
    const a = Math.min(d.x0, d.x1), b = Math.max(d.x0, d.x1);
    if (b - a > 4) setView(xToTime(Math.max(GUTTER, a)), xToTime(b));
    requestDraw();
    return;
  }
  if (d.moved && !d.pan && S.range && S.range.t1 > S.range.t0) selectRange(S.range.t0, S.range.t1, S.range.rows);
  else if (!d.moved && (ev.target === canvas || ev.target === pinned)) onClick(ev);
}

// onRulerDown starts a drag on the ruler: on release the view zooms to what it covered.
function onRulerDown(ev) {
  if (ev.button !== 0) return;
  const x = ev.clientX - ruler.getBoundingClientRect().left;
  drag = { ruler: true, x0: x, x1: x };
}

// rangeRowsParam is the rows= parameter of the range query of run ri: the rows the selected area
// covers ('' when it is a time range over every row).
function rangeRowsParam(ri) {
  const rows = S.range && S.range.rows;
  if (!rows) return '';
  return `&rows=${rows.filter((r) => r.run === ri).map((r) => r.row).join(',')}`;
}

// rangeHasRows: whether the selection covers rows of run ri (an area may leave a run out).
function rangeHasRows(ri) {
  return !S.range || !S.range.rows || S.range.rows.some((r) => r.run === ri);
}

// selectRange selects [t0, t1) (ns), over the rows listed ({run, row}: an area) or every row:
// shaded on the timeline, its statistics in the range panel.
function selectRange(t0, t1, rows) {
  S.range = { t0, t1 };
  if (rows) S.range.rows = rows;
  writeHash();
  requestDraw();
  openRange();
  fetchRange();
}

// clearRange drops the selected range and its panel.
function clearRange() {
  S.range = null;
  S.rangeStats = null;
  S.rangeSeq++;
  closeRange();
  writeHash();
  requestDraw();
}

// fitSelection fits the view to the selected range, else to the selected kernel, with a margin.
function fitSelection() {
  let a, b;
  if (S.range) [a, b] = [S.range.t0, S.range.t1];
  else if (S.selected && S.selected.d != null) {
    const sh = S.shift[S.selected.run] || 0;
    [a, b] = [S.selected.s + sh, S.selected.s + S.selected.d + sh];
  }
  else return;
  const pad = Math.max(b - a, MIN_SPAN) * 0.025;
  setView(a - pad, b + pad);
}

// onWheel: ctrl+wheel (and a trackpad's pinch, which the browser sends as ctrl+wheel) zooms at
// the pointer; shift+wheel or a sideways swipe pans; a plain wheel is left to the page, which
// scrolls.
function onWheel(ev) {
  const scale = ev.deltaMode === 1 ? 30 : ev.deltaMode === 2 ? 300 : 1;
  if (ev.ctrlKey || ev.metaKey) {
    ev.preventDefault();
    const x = ev.clientX - canvas.getBoundingClientRect().left;
    zoom(Math.exp(ev.deltaY * scale * 0.0018), Math.max(GUTTER, x));
    return;
  }
  if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
    ev.preventDefault();
    const dx = ev.shiftKey ? ev.deltaY || ev.deltaX : ev.deltaX;
    pan(dx * scale / plotWidth());
  }
}

// pointerX is the pointer's canvas x when it is over the plot (W/S zoom there, as ctrl+wheel
// does), else undefined (they zoom about the view's centre).
let pointerAt = null; // the pointer's canvas x over the plot (onMove), null once it left
function pointerX() {
  return pointerAt == null ? undefined : pointerAt;
}

// onKey answers the keys (web/API.md, the help): zoom, pan, fit, flows, find, help, Esc.
function onKey(ev) {
  if (ev.target.tagName === 'INPUT' || ev.target.tagName === 'SELECT') {
    if (ev.key === 'Escape') ev.target.blur();
    return;
  }
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return; // the browser's own shortcuts
  const k = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
  if (k === '+' || k === '=' || k === 'w') zoom(0.6, pointerX());
  else if (k === '-' || k === '_' || k === 's') zoom(1 / 0.6, pointerX());
  else if (k === 'ArrowLeft' || k === 'a') pan(-0.2);
  else if (k === 'ArrowRight' || k === 'd') pan(0.2);
  else if (k === '0') fitAll();
  else if (k === 'f') fitSelection();
  else if (k === '?') toggleHelp();
  else if (k === ']') flowStep(1);
  else if (k === '[') flowStep(-1);
  else if (k === '/') $('find').focus();
  else if (k === 'Escape') {
    if (!$('help').hidden) toggleHelp();
    else { clearRange(); closeDetails(); closeSearch(); }
  } else return;
  ev.preventDefault();
}
