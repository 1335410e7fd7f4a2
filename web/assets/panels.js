// panels.js: what the page shows beside the canvas: the tooltip, the details panel (kernel,
// overlap window), find, the header chips, the legend, the statistics cards and the status line.
'use strict';

// ------------------------------------------------------------------ tooltip, details

function tooltipHTML(h) {
  const b = h.band, run = S.runs[b.run];
  if (h.item != null || h.trackBin != null) return trackTooltip(h);
  if (h.toggle) return `<div class="kv">click to ${collapsedSet(b.run).has(run.rows[b.row].process) ? 'show' : 'hide'} this process's copies, API calls and NVTX ranges</div>`;
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
    await selectFlow(runIdx, 'kernel', id, { row: k.row, depth: 0, start: k.start, end: k.end });
  } catch (e) {
    showError(`Kernel ${id}: ${e.message}`);
  }
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
  S.flow = null;
  writeHash();
  requestDraw();
}

// ------------------------------------------------------------------ find

const FIND_LIMIT = 2000;
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
  trackLegend(lg);
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

function updateStatus() {
  const nsPerPx = (S.t1 - S.t0) / plotWidth();
  const modes = S.data.map((d) => {
    let k = 0, b = 0;
    for (const r of d.rows.values()) { if (r.mode === 'bins') b++; else k++; }
    return `${k} rows one by one, ${b} aggregated`;
  });
  $('status').textContent = `view ${fmtTime(S.t0, 6)} – ${fmtTime(S.t1, 6)} · ${fmtTime(nsPerPx)}/px · ${modes.join(' | ')} · last query ${S.lastQueryMs.toFixed(0)} ms · keys: +/− zoom, ←/→ pan, 0 fit, / find, drag on the ruler to zoom to a range`;
}
