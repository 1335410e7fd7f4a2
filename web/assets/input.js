// input.js: the page's input: the view in the URL hash, hit testing, hover, click, drag, wheel and
// keys.
'use strict';

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

// ------------------------------------------------------------------ hover, click

// hitTest finds what lies under canvas point (x, y).
function hitTest(x, y) {
  const b = bandAt(y);
  if (b && x < GUTTER && b.type === 'row' && b.first && hasTracks(b.run, S.runs[b.run].rows[b.row].process)) return { band: b, toggle: true };
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

function onClick(ev) {
  const r = canvas.getBoundingClientRect();
  const h = hitTest(ev.clientX - r.left, ev.clientY - r.top);
  if (!h) return;
  if (h.toggle) toggleProcess(h.band.run, S.runs[h.band.run].rows[h.band.row].process);
  else if (h.kernel != null) showKernel(h.band.run, h.R.id[h.kernel]);
  else if (h.item != null) showItem(h.band.run, ITEM_OF_KIND[h.row.kind], h.R.id[h.item]);
  else if (h.window) showWindow(h.band.run, h.window[0]);
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
