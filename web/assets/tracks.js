// tracks.js: the rows of what a process does besides its kernels: copies and memsets (a row per
// stream), CUDA API calls and NVTX ranges (a row per thread, a level per nesting depth). Their
// place in the layout (a process's rows collapse to its kernel rows, and expand again, by a
// click on its label), drawing (items or per-pixel bars, as the server answers), hit tests,
// tooltips, details (GET /api/item) and the flow arrows from a launching API call to the kernels
// and copies it launched (GET /api/flow), as Nsight Systems and Perfetto draw them, followed by a
// link in the details or the [ and ] keys. Loaded after
// draw.js, whose pixel layer and colours it uses. API: web/API.md.
'use strict';

// ------------------------------------------------------------------ constants

const LEVEL_H = 14;          // one level (nesting depth) of an API or NVTX row
const COLLAPSE_OVER = 4;     // runs with more processes than this start with them collapsed
const COPY_COLORS = {        // copies by direction (CUPTI memcpy kind), memsets apart
  HtoD: '#1b9aaa', DtoH: '#c2549d', DtoD: '#8f6a2a', PtoP: '#5c6bc0', memset: '#8a96a8', other: '#aab2be',
};
const API_COLOR = '#c9a13c';  // CUDA API calls
const API_FAIL_COLOR = '#b3261e';
const NVTX_COLORS = ['#5b8e7d', '#8c6bb1', '#c07a3e', '#4f7cac', '#a35d6a', '#6d8f3a', '#3f8f9b', '#9a7b4f'];
const TRACK_BIN_COLOR = { copies: '#8a96a8', api: API_COLOR, nvtx: '#6f8fa6' };
// CUPTI's CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind, the names `tlview export` and
// GET /api/item use (view_copy_name)
const MEMCPY_KINDS = ['', 'HtoD', 'DtoH', 'HtoA', 'AtoH', 'AtoA', 'AtoD', 'DtoA', 'DtoD', 'HtoH', 'PtoP'];
const MEMORY_KINDS = ['', 'Pageable', 'Pinned', 'Device', 'Array', 'Managed', 'Device Static', 'Managed Static'];
const ITEM_OF_KIND = { kernels: 'kernel', copies: 'copy', api: 'api', nvtx: 'nvtx' };

/* interface Row {          // one element of GET /api/runs "rows"
 *   id, kind: 'kernels' | 'copies' | 'api' | 'nvtx', lane, process,
 *   context, stream (kernels, copies) | thread, depth (api, nvtx), and its count:
 *   kernels | copies | calls | ranges
 * }
 * interface TrackData {    // GET /api/timeline "rows" of the other kinds
 *   row, n, mode: 'items', id[], s[], d[], z[] (levels), t[], k[], b[] (copies),
 *        name[] (api, nvtx: indexes into names[], each distinct name once)
 *        | mode: 'bins', count[], busy[] (copies) | levels[] {count[], busy[]} (api, nvtx)
 * }
 * interface Flow {         // the selected item and the records linked to it by correlation id
 *   run, from {kind, id, row, depth, start, end}, partners[] {kind, id, row, depth, start, end}
 * } */

// ------------------------------------------------------------------ layout

// isTrack: whether a row of GET /api/runs is one of this file's kinds (not kernels).
function isTrack(row) {
  return row.kind !== undefined && row.kind !== 'kernels';
}

// isThreadRow: whether a row is a thread's (API calls, NVTX ranges: nested, with levels).
function isThreadRow(row) {
  return row.kind === 'api' || row.kind === 'nvtx';
}

// rowHeight is a row's band height: a level per nesting depth in thread rows.
function rowHeight(row) {
  return isThreadRow(row) ? Math.max(1, row.depth) * LEVEL_H + 4 : ROW_H;
}

// collapsedSet is the set of collapsed process ids of run ri (made on first use: every process
// collapsed when the run has more than COLLAPSE_OVER processes with such rows, else none).
function collapsedSet(ri) {
  if (!S.collapsed) S.collapsed = [];
  if (!S.collapsed[ri]) {
    const run = S.runs[ri];
    const withTracks = new Set(run.rows.filter(isTrack).map((r) => r.process));
    S.collapsed[ri] = new Set(withTracks.size > COLLAPSE_OVER ? withTracks : []);
  }
  return S.collapsed[ri];
}

// hasTracks: whether process p of run ri has rows besides kernel rows.
function hasTracks(ri, p) {
  return S.runs[ri].rows.some((r) => r.process === p && isTrack(r));
}

// laneRows lists the row ids drawn in lane li of run ri, grouped by process (in the order of
// their kernel rows): each process's kernel rows, then unless it is collapsed its copies, API
// and NVTX rows. A process without kernel rows in the lane is never collapsed (its label would
// be gone).
function laneRows(ri, li) {
  const run = S.runs[ri];
  const order = [], groups = new Map();
  run.rows.forEach((row, rid) => {
    if (row.lane !== li) return;
    let g = groups.get(row.process);
    if (!g) { g = []; groups.set(row.process, g); order.push(row.process); }
    g.push(rid);
  });
  const collapsed = collapsedSet(ri), out = [];
  for (const p of order) {
    const g = groups.get(p);
    const shut = collapsed.has(p) && g.some((rid) => !isTrack(run.rows[rid]));
    for (const rid of g) if (!shut || !isTrack(run.rows[rid])) out.push(rid);
  }
  return out;
}

// toggleProcess collapses or expands the rows of process p of run ri.
function toggleProcess(ri, p) {
  const c = collapsedSet(ri);
  if (c.has(p)) c.delete(p); else c.add(p);
  layout();
  requestDraw();
  scheduleFetch();
}

// rowsParam is the rows= parameter of the viewport query of run ri: the rows laid out ('' when
// every row is, so the query stays short).
function rowsParam(ri) {
  const ids = S.bands.filter((b) => b.type === 'row' && b.run === ri).map((b) => b.row);
  return ids.length === S.runs[ri].rows.length ? '' : `&rows=${ids.join(',')}`;
}

// trackLabel is the gutter text of a row of this file's kinds.
function trackLabel(row) {
  if (row.kind === 'copies') return `copies · stream ${row.stream}`;
  return `${row.kind === 'api' ? 'CUDA API' : 'NVTX'} · thread ${row.thread}`;
}

// processMark is the ▾ / ▸ shown before a process's label when it has rows to collapse.
function processMark(ri, p) {
  if (!hasTracks(ri, p)) return '';
  return collapsedSet(ri).has(p) ? '▸ ' : '▾ ';
}

// ------------------------------------------------------------------ colours and names

// copyDirection is the colour key of a copy: its memcpy direction, or memset.
function copyDirection(t, k) {
  if (t === 2) return 'memset';
  const n = MEMCPY_KINDS[k];
  return n === 'HtoD' || n === 'DtoH' || n === 'DtoD' || n === 'PtoP' ? n : 'other';
}

// copyName is "Memcpy HtoD", "Memset (Device)": GET /api/item's name (view_copy_name).
function copyName(t, k) {
  if (t === 2) return k > 0 && k < MEMORY_KINDS.length ? `Memset (${MEMORY_KINDS[k]})` : 'Memset';
  return k > 0 && k < MEMCPY_KINDS.length ? `Memcpy ${MEMCPY_KINDS[k]}` : 'Memcpy';
}

const nvtxColorCache = new Map();
// nvtxColor picks a range's colour from its name (the same name, the same colour).
function nvtxColor(name) {
  let c = nvtxColorCache.get(name);
  if (!c) {
    let h = 0;
    // digits are dropped so that "step 1" and "step 2" share a colour
    for (const ch of name.replace(/[0-9]+/g, '')) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    c = NVTX_COLORS[h % NVTX_COLORS.length];
    nvtxColorCache.set(name, c);
  }
  return c;
}

// itemColor is the colour of record i of a row of this file's kinds.
function itemColor(row, R, i) {
  if (row.kind === 'copies') return COPY_COLORS[copyDirection(R.t[i], R.k[i])];
  if (row.kind === 'api') return API_COLOR;
  return nvtxColor(R.names[R.name[i]]);
}

// fmtBytes writes a byte count in the unit that suits it.
function fmtBytes(b) {
  if (b < 1024) return `${b} B`;
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { b /= 1024; i++; } while (b >= 1024 && i < u.length - 1);
  return `${+b.toPrecision(3)} ${u[i]}`;
}

// ------------------------------------------------------------------ drawing

// levelY is the top of level z of band b (0 for stream rows).
function levelY(b, row, z) {
  return isThreadRow(row) ? b.y + 2 + z * LEVEL_H : b.y + 2;
}

// levelH is the height of one level of band b (the row's height for stream rows).
function levelH(b, row) {
  return isThreadRow(row) ? LEVEL_H - 2 : b.h - 4;
}

// drawTrack draws one row of this file's kinds: in phase 'bars' its records (or per-pixel bars,
// per level) into the pixel layer, in phase 'marks' the names on wide records and the outline
// of the selected one and of its flow partners.
function drawTrack(b, run, d, phase) {
  const row = run.rows[b.row];
  const R = d && d.rows.get(b.row);
  const W = cssWidth, h = levelH(b, row);
  if (phase === 'bars') {
    drawRowLabel(b, run, row, processColor(run, row.process));
    if (!R) return;
    if (R.mode === 'items') {
      for (let i = 0; i < R.s.length; i++) {
        let x0 = timeToX(R.s[i]), x1 = timeToX(R.s[i] + R.d[i]);
        if (x1 < GUTTER || x0 > W) continue;
        x0 = Math.max(GUTTER, x0);
        x1 = Math.min(W, x1);
        const y = levelY(b, row, R.z ? R.z[i] : 0);
        layerRect(x0, y, Math.max(1 / layer.dpr, x1 - x0 - (x1 - x0 > 4 ? 1 : 0)), h, rgba32(itemColor(row, R, i)));
      }
      return;
    }
    const levels = R.levels || [R];
    const px = rgba32(TRACK_BIN_COLOR[row.kind]);
    levels.forEach((L, z) => {
      const y = levelY(b, row, z);
      for (let j = 0; j < d.width; j++) {
        if (!L.count[j]) continue;
        const x0 = d.xs[j], x1 = d.xs[j + 1];
        if (x1 < GUTTER || x0 > W) continue;
        const bh = Math.max(2, h * L.busy[j] / 1000);
        const xa = Math.max(GUTTER, x0);
        layerRect(xa, y + h - bh, Math.max(1 / layer.dpr, x1 - xa), bh, px);
      }
    });
    return;
  }
  if (!R || R.mode !== 'items') return;
  ctx.font = '10px system-ui, sans-serif';
  for (let i = 0; i < R.s.length; i++) {
    const x0 = Math.max(GUTTER, timeToX(R.s[i])), x1 = Math.min(W, timeToX(R.s[i] + R.d[i]));
    if (x1 < GUTTER || x0 > W) continue;
    const y = levelY(b, row, R.z ? R.z[i] : 0), w = x1 - x0;
    const kind = ITEM_OF_KIND[row.kind];
    const sel = isSelectedItem(b.run, kind, R.id[i]);
    if (w > 40) {
      const text = row.kind === 'copies' ? `${copyName(R.t[i], R.k[i])} ${fmtBytes(R.b[i])}` : R.names[R.name[i]];
      ctx.fillStyle = row.kind === 'api' ? '#2a2110' : '#fff';
      ctx.fillText(ellipsis(text, w - 6), x0 + 3, y + h / 2 + 0.5);
    }
    if (sel) {
      ctx.strokeStyle = '#111';
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 + 0.5, y - 1, Math.max(1, w - 1), h + 2);
    }
  }
  ctx.font = '11px system-ui, sans-serif';
}

// isSelectedItem: whether (run, kind, id) is the selected item or one of its flow partners.
function isSelectedItem(ri, kind, id) {
  const f = S.flow;
  if (!f || f.run !== ri) return false;
  if (f.from.kind === kind && f.from.id === id) return true;
  return f.partners.some((p) => p.kind === kind && p.id === id);
}

// rowBand is the band of row `row` of run ri (null when it is not laid out).
function rowBand(ri, row) {
  return S.bands.find((b) => b.type === 'row' && b.run === ri && b.row === row) || null;
}

// drawFlows draws the selected item's flow arrows: from each launching API call (its end) to
// the kernel or copy it launched (its start), and outlines the kernels among the partners.
function drawFlows() {
  const f = S.flow;
  if (!f) return;
  onRun(f.run);
  const from = f.from;
  for (const p of f.partners) {
    const api = from.kind === 'api' ? from : p, gpu = from.kind === 'api' ? p : from;
    const ba = rowBand(f.run, api.row), bg = rowBand(f.run, gpu.row);
    if (!ba || !bg) continue;
    const ra = S.runs[f.run].rows[api.row], rg = S.runs[f.run].rows[gpu.row];
    const xa = timeToX(api.end), ya = levelY(ba, ra, api.depth) + levelH(ba, ra) / 2;
    const xg = timeToX(gpu.start), yg = levelY(bg, rg, gpu.depth) + levelH(bg, rg) / 2;
    if (Math.max(xa, xg) < GUTTER || Math.min(xa, xg) > cssWidth) continue;
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, 0, cssWidth - GUTTER, surfH);
    ctx.clip();
    ctx.strokeStyle = '#1d2430';
    ctx.fillStyle = '#1d2430';
    ctx.lineWidth = 1.5;
    const dx = Math.max(20, Math.abs(xg - xa) / 2);
    ctx.beginPath();
    ctx.moveTo(xa, ya);
    ctx.bezierCurveTo(xa + dx, ya, xg - dx, yg, xg, yg);
    ctx.stroke();
    ctx.beginPath(); // arrowhead at the launched record, pointing right
    ctx.moveTo(xg, yg);
    ctx.lineTo(xg - 7, yg - 4);
    ctx.lineTo(xg - 7, yg + 4);
    ctx.closePath();
    ctx.fill();
    ctx.beginPath();
    ctx.arc(xa, ya, 2.5, 0, 2 * Math.PI);
    ctx.fill();
    if (p.kind === 'kernel' || from.kind === 'kernel') { // kernels outline themselves only when selected
      const k = p.kind === 'kernel' ? p : from;
      const x0 = Math.max(GUTTER, timeToX(k.start)), x1 = timeToX(k.end);
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 + 0.5, bg.y + 1, Math.max(1, x1 - x0 - 1), bg.h - 2);
    }
    ctx.restore();
  }
}

// ------------------------------------------------------------------ hit tests, tooltips

// hitTrack finds the record (or per-pixel bar) of a row of this file's kinds under (t, y).
function hitTrack(b, R, t, y, j, d) {
  const row = S.runs[b.run].rows[b.row];
  const z = isThreadRow(row) ? Math.floor((y - b.y - 2) / LEVEL_H) : 0;
  if (z < 0 || (isThreadRow(row) && z >= row.depth)) return { band: b };
  if (R.mode === 'items') {
    const tol = 3 * (S.t1 - S.t0) / plotWidth();
    let best = -1, bestDist = Infinity;
    for (let i = 0; i < R.s.length; i++) {
      if ((R.z ? R.z[i] : 0) !== z) continue;
      const s = R.s[i], e = R.s[i] + R.d[i];
      const dist = t < s ? s - t : t > e ? t - e : 0;
      if (dist <= tol && dist < bestDist) { best = i; bestDist = dist; }
    }
    return best >= 0 ? { band: b, item: best, R, row } : { band: b };
  }
  const L = R.levels ? R.levels[z] : R;
  if (L && j >= 0 && j < d.width && L.count[j]) return { band: b, trackBin: j, level: z, L, d, row };
  return { band: b };
}

// trackTooltip is the tooltip of a record (or an aggregated pixel) of a row of this file's kinds.
function trackTooltip(h) {
  const run = S.runs[h.band.run], row = h.row, p = run.processes[row.process];
  if (h.item != null) {
    const R = h.R, i = h.item;
    const where = row.kind === 'copies' ? `stream <b>${row.stream}</b>` : `thread <b>${row.thread}</b> · level <b>${R.z[i]}</b>`;
    let name;
    if (row.kind === 'copies') name = `${copyName(R.t[i], R.k[i])} · ${fmtBytes(R.b[i])}`;
    else name = `${row.kind === 'api' ? '' : 'NVTX '}${R.names[R.name[i]]}`;
    return `<div class="name">${esc(name)}</div>` +
      `<div class="kv">pid <b>${p.pid}</b> · ${where}</div>` +
      `<div class="kv">duration <b>${fmtTime(R.d[i])}</b> · start <b>${fmtTime(R.s[i], 6)}</b></div>` +
      (row.kind === 'nvtx' ? '' : '<div class="kv">click for the details and the flow</div>');
  }
  const L = h.L, j = h.trackBin, d = h.d;
  const what = { copies: 'copies and memsets', api: 'API calls', nvtx: 'NVTX ranges' }[row.kind];
  return `<div class="kv"><b>${fmtCount(L.count[j])}</b> ${what}${isThreadRow(row) ? ` at level ${h.level}` : ''} in ${fmtTime((d.t1 - d.t0) / d.width)}</div>` +
    `<div class="kv">busy <b>${(L.busy[j] / 10).toFixed(1)}%</b> · pid <b>${p.pid}</b></div>` +
    '<div class="kv">zoom in to see them one by one</div>';
}

// ------------------------------------------------------------------ details and flows

// selectFlow asks GET /api/flow for the records linked to (kind, id) of run ri, expands their
// processes if collapsed and draws the arrows. `from` is the selected record {row, depth, start,
// end} (from its details).
async function selectFlow(ri, kind, id, from) {
  S.flow = null;
  if (kind === 'nvtx') { requestDraw(); return; }
  try {
    const f = await getJSON(`api/flow?run=${ri}&kind=${kind}&id=${id}`);
    S.flow = { run: ri, from: { kind, id, ...from }, partners: f.partners.filter((p) => p.row != null) };
    const c = collapsedSet(ri);
    const hidden = S.flow.partners.some((p) => !rowBand(ri, p.row));
    for (const p of S.flow.partners) { c.delete(S.runs[ri].rows[p.row].process); S.arrange.hidden[ri].delete(p.row); }
    if (hidden) { layout(); scheduleFetch(); }
    requestDraw();
  } catch (e) {
    showError(`Flow of ${kind} ${id}: ${e.message}`);
  }
}

// showItem opens the details of a copy, API call or NVTX range and selects its flow.
async function showItem(ri, kind, id) {
  try {
    const it = await getJSON(`api/item?run=${ri}&kind=${kind}&id=${id}`);
    S.selected = null; // the kernel selection
    S.item = { run: ri, kind, id };
    writeHash();
    const rows = [['process', `pid ${it.pid}`]];
    if (kind === 'copy') {
      rows.push(['GPU · context · stream', `${it.lane} · ${it.context} · ${it.stream}`],
        ['bytes', `${fmtCount(it.bytes)} (${fmtBytes(it.bytes)})`],
        ['throughput', it.dur > 0 ? `${(it.bytes / it.dur).toPrecision(3)} GB/s` : '–'],
        ['correlation id', it.correlation]);
    } else {
      rows.push(['thread', it.thread], ['level', it.depth]);
      if (kind === 'api') rows.push(['API', it.domain || '–'], ['status', it.status === 0 ? '0 (success)' : it.status], ['correlation id', it.correlation]);
      else rows.push(['domain', it.domain == null ? 'default' : it.domain]);
    }
    rows.push(['start', fmtTime(it.start, 7)], ['duration', fmtTime(it.dur, 4)]);
    const html = `<div class="mono">${esc(it.name)}</div><table>${rows.map(([a, b]) => `<tr><td>${esc(a)}</td><td>${esc(b)}</td></tr>`).join('')}</table>`;
    openDetails({ copy: 'Copy', api: 'CUDA API call', nvtx: 'NVTX range' }[kind], html);
    await selectFlow(ri, kind, id, { row: it.row, depth: it.depth, start: it.start, end: it.end });
    $('details-body').insertAdjacentHTML('beforeend', flowBlock(kind));
  } catch (e) {
    showError(`${kind} ${id}: ${e.message}`);
  }
}

// ------------------------------------------------------------------ following a flow

const FLOW_WORDS = { kernel: 'kernel', copy: 'copy', api: 'API call' };

// flowBlock is the details' list of the selected record's flow partners (what an API call
// launched, or the call that launched a kernel or copy), each a link that selects it and brings it
// into view; ] follows a launch to what it launched, [ a kernel or copy back to its launch.
function flowBlock(kind) {
  const f = S.flow;
  if (!f || !f.partners.length) return '';
  const list = f.partners.map((p, i) => `<tr><td><a href="#" class="flow" data-i="${i}">${esc(FLOW_WORDS[p.kind] || p.kind)} ${esc(shortName(p.name || ''))}</a></td>` +
    `<td>${fmtTime(p.start, 7)} · ${fmtTime(p.end - p.start, 4)}</td></tr>`).join('');
  return `<div class="blk"><h4>${kind === 'api' ? 'Launched' : 'Launched by'} (key ${kind === 'api' ? ']' : '['})</h4><table class="flowlist">${list}</table></div>`;
}

// flowGo selects partner i of the selected record's flow and moves the view to it (centred, the
// view's length kept unless the partner is longer).
async function flowGo(i) {
  const f = S.flow;
  const p = f && f.partners[i];
  if (!p) return;
  const sh = S.shift[f.run] || 0;
  const span = Math.max(S.t1 - S.t0, (p.end - p.start) * 1.5), c = p.start + sh + (p.end - p.start) / 2;
  setView(c - span / 2, c + span / 2);
  if (p.kind === 'kernel') await showKernel(f.run, p.id);
  else await showItem(f.run, p.kind, p.id);
}

// flowStep steps along the selected record's flow: ] (dir 1) from an API call to the first
// record it launched, [ (dir -1) from a kernel or copy to the call that launched it.
function flowStep(dir) {
  const f = S.flow;
  if (!f || !f.partners.length) return;
  if ((dir > 0) === (f.from.kind === 'api')) flowGo(0);
}

// ------------------------------------------------------------------ legend

// trackLegend appends the copies' colours to the legend when a run has copies.
function trackLegend(lg) {
  if (!S.runs.some((run) => run.rows.some((r) => r.kind === 'copies'))) return;
  lg.append(el('span', 'title', ' Copies'));
  for (const k of ['HtoD', 'DtoH', 'DtoD', 'memset']) {
    const it = el('span', 'item');
    it.append(swatch(COPY_COLORS[k]), k);
    lg.append(it);
  }
}
