// panels.js: what the page shows around the canvas: the tooltip, the bottom panel (details of a
// kernel or an overlap window; statistics of the selected range), the help overlay, find, the
// header chips, the legend, the statistics cards and the status line.
'use strict';

// ------------------------------------------------------------------ constants

const SWITCHES_SHOWN = 50; // context switches of a took-turns window listed in its evidence

// ------------------------------------------------------------------ tooltip, details

// hideTooltip hides the tooltip and forgets what was under the mouse (the view moved).
function hideTooltip() {
  S.hover = null;
  $('tooltip').hidden = true;
}

// tooltipHTML is the tooltip of what hitTest found (h), '' for nothing.
function tooltipHTML(h) {
  const b = h.band, run = S.runs[b.run];
  if (h.item != null || h.trackBin != null) return trackTooltip(h);
  if (h.toggle) return `<div class="kv">click to ${collapsedSet(b.run).has(run.rows[b.row].process) ? 'show' : 'hide'} this process's copies, API calls and NVTX ranges</div>`;
  if (b.type === 'run' && h.kernel == null) return `<div class="kv">${runLetter(b.run)} · <b>${esc(run.label)}</b></div>`;
  if (h.kernel != null) {
    const R = h.R, i = h.kernel;
    const L = run.launches[R.l[i]];
    const row = run.rows[b.row];
    const p = run.processes[row.process];
    const v = S.verdicts[R.v[i]];
    return `<div class="name">${esc(run.names[L[0]])}</div>` +
      `<div class="kv">pid <b>${p.pid}</b>${p.rank != null ? ` · rank <b>${p.rank}</b>` : ''} · stream <b>${row.stream}</b> · GPU <b>${run.lanes[row.lane].lane}</b></div>` +
      `<div class="kv">grid <b>(${L[1]}, ${L[2]}, ${L[3]})</b> · block <b>(${L[4]}, ${L[5]}, ${L[6]})</b></div>` +
      `<div class="kv">duration <b>${fmtTime(R.d[i])}</b> · stretch <b>${fmtX(R.x[i])}</b></div>` +
      `<div class="kv">start <b>${fmtTime(R.s[i], 6)}</b> · verdict <b>${esc(v)}</b></div>`;
  }
  if (h.bin != null) {
    const R = h.R, j = h.bin, d = h.d;
    const px = (d.t1 - d.t0) / d.width;
    const v = R.verdict[j] >= 0 ? S.verdicts[R.verdict[j]] : '–';
    return `<div class="kv"><b>${fmtCount(R.count[j])}</b> kernels in ${fmtTime(px)}</div>` +
      `<div class="kv">busy <b>${(R.busy[j] / 10).toFixed(1)}%</b> · verdict <b>${esc(v)}</b></div>` +
      '<div class="kv">zoom in to see single kernels</div>';
  }
  if (h.window) {
    const w = h.window;
    return `<div class="kv">overlap window <b>${esc(S.verdicts[w[3]])}</b></div>` +
      `<div class="kv">${fmtTime(w[1], 6)} – ${fmtTime(w[2], 6)} (<b>${fmtTime(w[2] - w[1])}</b>)</div>` +
      '<div class="kv">click for the evidence</div>';
  }
  if (h.pill) {
    const t = laneVerdictText(run.lanes[b.lane]);
    return `<div class="kv"><b>${esc(t.verdict)}</b>: ${esc(t.meaning)}</div>` +
      (t.rule ? `<div class="kv">decided by <b>${esc(t.rule)}</b>: ${esc(t.ruleText)}</div>` : '') +
      '<div class="kv">click for the evidence</div>';
  }
  if (h.pin) return `<div class="kv">click to ${isPinned(b.run, b.lane) ? 'unpin this GPU\'s tracks (they scroll with its rows)' : 'pin this GPU\'s tracks on top (they stay in sight while the rows scroll)'}</div>`;
  if (h.rowctl) return `<div class="kv">${{ up: 'move this row up', down: 'move this row down', hide: 'hide this row (the legend shows it again)' }[h.rowctl]}</div>`;
  if (h.capture) {
    const c = h.capture, p = run.processes[c.process];
    return `<div class="kv">captured range <b>${esc(c.name || '(unnamed)')}</b> of ${p ? esc(pidText(p)) : 'a process'}</div>` +
      `<div class="kv">${fmtTime(c.start, 6)} – ${fmtTime(c.end, 6)} (<b>${fmtTime(c.end - c.start)}</b>)</div>`;
  }
  if (h.turn) {
    const w = h.turn;
    return '<div class="kv"><b>time-sliced: took turns</b>, no overlap</div>' +
      `<div class="kv"><b>${fmtCount(w[3])}</b> context switches (a mark at each, where the GPU sat idle handing over); one context at a time between them</div>` +
      `<div class="kv">${fmtTime(w[1], 6)} – ${fmtTime(w[2], 6)} (<b>${fmtTime(w[2] - w[1])}</b>)</div>` +
      '<div class="kv">click for the evidence</div>';
  }
  if (h.lanebin != null) {
    const L = h.L, j = h.lanebin;
    const v = L.verdict[j] >= 0 ? S.verdicts[L.verdict[j]] : 'idle';
    return `<div class="kv">processes in flight: peak <b>${L.conc_max ? L.conc_max[j] : '–'}</b>, mean <b>${L.conc_mean ? L.conc_mean[j] : '–'}</b></div>` +
      `<div class="kv">effective parallelism <b>${L.par && L.par[j] != null ? L.par[j].toFixed(2) : '–'}</b> (solo work per ns)</div>` +
      `<div class="kv">busy <b>${L.busy ? (L.busy[j] / 10).toFixed(1) : '–'}%</b> · overlap <b>${(L.overlap[j] / 10).toFixed(1)}%</b> · <b>${esc(v)}</b></div>`;
  }
  return '';
}


// contextText: a kernel's context in words: its MPS state and its partition of the GPU (an MPS
// client's thread limit, a green context's SMs), of the GPU's SMs where known.
function contextText(k) {
  const of = (n) => `${n}${k.device_sms ? ` of ${k.device_sms}` : ''} SMs`;
  const limited = k.context_thread_percentage != null && k.context_thread_percentage < 100;
  const mps = k.context_mps !== 'on' ? ''
    : limited ? ` (an MPS client at ${k.context_thread_percentage}% of the threads${k.context_sms ? `: ${of(k.context_sms)}` : ''})`
      : ' (an MPS client)';
  const green = k.green
    ? `green: an SM partition${k.context_sms ? ` of ${of(k.context_sms)}` : ''}${k.parent_context != null ? `, of context ${k.parent_context}` : ''}`
    : 'not green';
  return `${mpsText(k.context_mps)}${mps} · ${green}`;
}

// showKernel opens the details with one kernel's full record and its window's evidence.
async function showKernel(runIdx, id) {
  try {
    const k = await getJSON(`api/kernel?run=${runIdx}&id=${id}`);
    S.selected = { run: runIdx, id, s: k.start, d: k.dur };
    S.item = null;
    writeHash();
    requestDraw();
    const kp = S.runs[runIdx].processes[k.process];
    const rows = [
      ['process', `pid ${k.pid}`], ...(kp && kp.rank != null ? [['rank', rankText(kp)]] : []),
      ['GPU · context · stream', `${k.lane} · ${k.context} · ${k.stream}`],
      ['its context', contextText(k)],
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
    let html = `<div class="blk"><div class="mono">${esc(k.name)}</div><table>${rows.map(([a, b]) => `<tr><td>${esc(a)}</td><td>${esc(b)}</td></tr>`).join('')}</table>`;
    if (k.mangled !== k.name) html += `<h4>Mangled</h4><div class="mono">${esc(k.mangled)}</div>`;
    html += '</div>';
    if (k.window) html += windowTable(k.window);
    openDetails('Kernel', html);
    await selectFlow(runIdx, 'kernel', id, { row: k.row, depth: 0, start: k.start, end: k.end });
    $('details-body').insertAdjacentHTML('beforeend', flowBlock('kernel'));
  } catch (e) {
    showError(`Kernel ${id}: ${e.message}`);
  }
}

// windowTable is the evidence of an analysis window (GET /api/window, or a kernel's window): an
// overlap window's figures; a took-turns window's switches (each a link to its handover); a quiet
// window's kernels, one context at a time. Figures that only overlap defines are not shown for
// windows without overlap (their peak in flight is not measured there).
function windowTable(w) {
  const turns = w.rule === 'took-turns';
  const over = S.verdicts.indexOf(w.verdict) >= 2 && !turns;
  const rows = [
    ['verdict', w.verdict], ['span', `${fmtTime(w.t0, 6)} – ${fmtTime(w.t1, 6)}`], ['length', fmtTime(w.t1 - w.t0)],
    ['kernels', w.kernels],
  ];
  if (over) rows.push(['peak processes · contexts', `${w.max_processes} · ${w.max_contexts}`]);
  else if (w.kernels > 0) rows.push(['in flight', 'one context at a time (no overlap)']);
  if (turns) rows.push(
    ['rule', `${w.rule}: ${S.rules[w.rule] || ''}`], ['overlapped', 'never: each kernel inside its context\'s time slice'],
    ['context switches', `${fmtCount(w.switches)} (the GPU idle ${fmtTime(w.switch_gap_ns)} at them, summed; ${fmtTime(w.switches ? w.switch_gap_ns / w.switches : 0)} each on average)`],
    ['MPS client in window', w.mps ? 'yes' : 'no']);
  if (over) rows.push(
    ['rule', `${w.rule}: ${S.rules[w.rule] || ''}`], ['overlapped', fmtTime(w.overlap_ns)],
    ['contexts in flight (mean)', w.contexts_in_flight == null ? '–' : w.contexts_in_flight.toFixed(2)],
    ['stretch where they overlapped', fmtStretch(w.stretch, w.basis)],
    ['effective parallelism', w.parallelism == null ? '–' : w.parallelism.toFixed(2)],
    ['overlap share of their time', fmtPct(w.overlap_share)],
    ['reference coverage', fmtPct(w.coverage)], ['MPS client in window', w.mps ? 'yes' : 'no']);
  let html = `<div class="blk"><h4>Window · evidence</h4><table>${rows.map(([a, b]) => `<tr><td>${esc(a)}</td><td>${esc(b)}</td></tr>`).join('')}</table></div>`;
  if (turns && w.switch_times && w.switch_times.length) {
    const shown = w.switch_times.slice(0, SWITCHES_SHOWN);
    html += `<div class="blk"><h4>Context switches (handovers)</h4><table class="switches">${shown.map((t, i) =>
      `<tr><td><a href="#" class="goto" data-t0="${t - w.switch_gaps[i]}" data-t1="${t}">${fmtTime(t, 7)}</a></td><td>idle ${fmtTime(w.switch_gaps[i])} before</td></tr>`).join('')}</table>` +
      (w.switches_found > shown.length ? `<div class="kv">${fmtCount(w.switches_found - shown.length)} more</div>` : '') + '</div>';
  }
  return html;
}

// onPanelLink follows a link of the details panel: a flow partner (data-i: tracks.js flowGo), or
// a time span (data-t0, data-t1, ns) shown with room around it (twenty times its length, at
// least 2 µs).
function onPanelLink(ev) {
  const fl = ev.target.closest('a.flow');
  if (fl) { ev.preventDefault(); flowGo(+fl.dataset.i); return; }
  const a = ev.target.closest('a.goto');
  if (!a) return;
  ev.preventDefault();
  const t0 = +a.dataset.t0, t1 = +a.dataset.t1;
  const span = Math.max(20 * (t1 - t0), 2000), c = (t0 + t1) / 2;
  setView(c - span / 2, c + span / 2);
}

// laneVerdictText is what a GPU's verdict pill says on hover: the verdict, what it means, the
// rule that decided it and its sentence, and the GPU's evidence.
function laneVerdictText(lane) {
  const v = S.verdicts.indexOf(lane.verdict);
  const bv = (lane.by_verdict || {})[lane.verdict];
  const rule = bv && bv.rule && bv.rule !== 'none' ? bv.rule : null;
  return { verdict: lane.verdict, meaning: S.meanings[v] || '', rule, ruleText: rule ? S.rules[rule] || '' : '', evidence: lane.evidence || '' };
}

// showLane opens a GPU's evidence in the details panel (a click on its verdict pill): the
// verdict and its rule, the evidence sentence, and its time by verdict with each one's figures.
function showLane(ri, li) {
  const lane = S.runs[ri].lanes[li], t = laneVerdictText(lane);
  const rows = [['verdict', `${t.verdict}: ${t.meaning}`]];
  if (t.rule) rows.push(['decided by', `${t.rule}: ${t.ruleText}`]);
  rows.push(['processes · contexts', `${lane.processes} · ${lane.contexts} (${mpsText(lane.mps)})`], ['busy · overlap', `${fmtTime(lane.busy_ns)} · ${fmtTime(lane.overlap_ns)}`],
    ['stretch while overlapped', fmtStretch(lane.stretch, lane.basis)], ['effective parallelism', lane.parallelism == null ? '–' : lane.parallelism.toFixed(2)],
    ['MPS would gain', lane.gain_basis === 'none' ? '–' : gainText(lane.predicted_gain_low, lane.predicted_gain, '–')]);
  let html = `<div class="blk"><table>${rows.map(([a, b]) => `<tr><td>${esc(a)}</td><td>${esc(b)}</td></tr>`).join('')}</table>`;
  if (t.evidence) html += `<h4>Evidence</h4><div class="kv">${esc(t.evidence)}</div>`;
  html += '</div>';
  const bv = Object.entries(lane.by_verdict || {}).filter(([, x]) => x && x.windows);
  if (bv.length) {
    html += `<div class="blk wide"><h4>Time by verdict</h4><table><tr><th>verdict</th><th>windows</th><th>time</th><th>share</th><th>stretch</th><th>contexts</th><th>parallelism</th><th>rule</th></tr>${bv.map(([v, x]) =>
      `<tr><td>${esc(v)}</td><td>${x.windows}</td><td>${fmtTime(x.ns)}</td><td>${fmtPct(x.share)}</td><td>${fmtStretch(x.stretch, x.basis)}</td><td>${x.contexts_in_flight == null ? '–' : x.contexts_in_flight.toFixed(2)}</td><td>${x.parallelism == null ? '–' : x.parallelism.toFixed(2)}</td><td>${esc(x.rule || '–')}</td></tr>`).join('')}</table></div>`;
  }
  openDetails(`${S.runs.length > 1 ? `${runLetter(ri)} · ` : ''}GPU ${lane.lane}: ${lane.verdict}`, html);
}

// showWindow opens the evidence of analysis window `id` of run runIdx (GET /api/window).
async function showWindow(runIdx, id) {
  try {
    const w = await getJSON(`api/window?run=${runIdx}&id=${id}`);
    const title = w.rule === 'took-turns' ? 'Window: contexts took turns' : S.verdicts.indexOf(w.verdict) >= 2 ? 'Overlap window' : 'Window';
    openDetails(title, windowTable(w));
  } catch (e) {
    showError(`Window ${id}: ${e.message}`);
  }
}

// ------------------------------------------------------------------ bottom panel
// One panel at the bottom of the window, as in Perfetto, so that the plot keeps its width: the
// details of what was clicked and the statistics of the selected range, one tab each.

const panel = { tab: 'details', details: false, range: false, search: false, collapsed: false,
  height: 0 }; // height: px the user dragged the drawer to (0: the style sheet's)
const PANEL_TABS = ['details', 'range', 'search']; // each with #tab-X and #X-body

// ------------------------------------------------------------------ the drawer's height

const PANEL_MIN = 90; // px: the drawer's least height when dragged (its title bar and a few rows)

// onGripDown starts a drag of the drawer's top edge: its height follows the pointer, between
// PANEL_MIN and 85% of the window, and is kept for the rest of the visit.
function onGripDown(ev) {
  if (ev.button !== 0) return;
  ev.preventDefault();
  const start = ev.clientY, h0 = $('details').getBoundingClientRect().height;
  const move = (e) => {
    panel.height = Math.round(Math.max(PANEL_MIN, Math.min(window.innerHeight * 0.85, h0 + start - e.clientY)));
    $('details').style.height = `${panel.height}px`;
    document.body.style.paddingBottom = `${panel.height}px`;
  };
  const up = () => { window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up); showTab(); };
  window.addEventListener('mousemove', move);
  window.addEventListener('mouseup', up);
}

// showTab shows the panel on tab `tab` ('details', 'range' or 'search'), or hides it when none
// has content; the page gets room at its bottom so that nothing stays under the panel.
function showTab(tab) {
  if (tab) panel.tab = tab;
  if (!panel[panel.tab]) panel.tab = PANEL_TABS.find((t) => panel[t]) || 'details';
  const open = PANEL_TABS.some((t) => panel[t]);
  $('details').hidden = !open;
  for (const t of PANEL_TABS) {
    $(`tab-${t}`).hidden = !panel[t];
    $(`tab-${t}`).classList.toggle('on', panel.tab === t);
    $(`${t}-body`).hidden = panel.tab !== t || panel.collapsed;
  }
  $('details').classList.toggle('collapsed', panel.collapsed);
  $('details').style.height = panel.height && !panel.collapsed ? `${panel.height}px` : '';
  $('panel-collapse').textContent = panel.collapsed ? '▴' : '▾';
  $('panel-collapse').title = panel.collapsed ? 'Expand the panel' : 'Collapse the panel';
  document.body.style.paddingBottom = open ? `${$('details').offsetHeight}px` : '';
  requestDraw();
}

// openDetails fills the details tab (its title, its HTML) and shows it.
function openDetails(title, html) {
  $('details-title').textContent = title;
  $('details-body').innerHTML = html;
  panel.details = true;
  panel.collapsed = false;
  showTab('details');
}

// closeDetails empties the details tab and drops the selected kernel, record and flow.
function closeDetails() {
  panel.details = false;
  $('details-body').textContent = '';
  S.selected = null;
  S.item = null;
  S.flow = null;
  showTab();
  writeHash();
}

// openRange shows the range tab (fetchRange fills it).
function openRange() {
  panel.range = true;
  panel.collapsed = false;
  renderRange();
  showTab('range');
}

// closeRange empties and hides the range tab.
function closeRange() {
  panel.range = false;
  $('range-body').textContent = '';
  showTab();
}

// openSearch shows the search results' tab (search.js fills it).
function openSearch() {
  if (!panel.search) panel.collapsed = false;
  panel.search = true;
  showTab(panel.details && panel.tab === 'details' ? 'details' : 'search');
}

// closeSearch empties and hides the search tab (the search's text stays in its box).
function closeSearch() {
  panel.search = false;
  $('search-body').textContent = '';
  showTab();
}

// toggleCollapse collapses the bottom panel to its title bar, or opens it again.
function toggleCollapse() {
  panel.collapsed = !panel.collapsed;
  showTab();
}

// renderRange fills the range tab: the selection (a time range, or an area: a range over some
// rows), then per run its time per verdict and parallelism per GPU (the GPU's, whatever the
// rows), and over the rows selected its kernels by process, by verdict and by name (every name)
// and the other records by name: sortable tables, each with its CSV.
function renderRange() {
  const box = $('range-body');
  if (!S.range) return;
  box.textContent = '';
  const head = el('div', 'range-head');
  const nrows = S.range.rows ? S.range.rows.length : 0;
  head.append(S.range.rows ? 'Area ' : 'Range ', el('b', null, fmtTime(S.range.t1 - S.range.t0, 4)),
    ` · ${fmtTime(S.range.t0, 6)} – ${fmtTime(S.range.t1, 6)}${S.range.rows ? ` · over ${plural(nrows, 'row', 'rows')}` : ''}`);
  box.append(head);
  if (!S.rangeStats) { box.append(el('div', 'kv', 'reading the range…')); return; }
  const num = (name, value, cell) => ({ name, value, cell, num: true });
  const kern = (label, key) => [
    { name: label, value: key.value, cell: key.cell },
    num('kernels', (x) => x.kernels, (x) => fmtCount(x.kernels)),
    num('time inside', (x) => x.ns, (x) => fmtTime(x.ns)),
    num('mean', (x) => (x.kernels ? x.ns / x.kernels : NaN), (x) => (x.kernels ? fmtTime(x.ns / x.kernels) : '–')),
    num('stretch', (x) => (x.stretch == null ? NaN : x.stretch), (x) => fmtX(x.stretch)),
  ];
  S.rangeStats.forEach((st, ri) => {
    if (!st) return; // an area without rows of this run
    const run = S.runs[ri];
    const tag = S.runs.length > 1 ? `${runLetter(ri)} · ` : '';
    const file = (what) => `${tag.replace(' · ', '-').toLowerCase()}${what}.csv`;
    const g = el('div', 'blk');
    g.append(el('h4', null, `${tag}GPUs: time by verdict`));
    for (const L of st.lanes) {
      const lane = run.lanes[L.lane];
      const tot = L.verdict_ns.reduce((a, b) => a + b, 0);
      const rows = [];
      L.verdict_ns.forEach((ns, v) => { if (ns > 0) rows.push([badge(S.verdicts[v]), fmtTime(ns), fmtPct(tot ? ns / tot : null)]); });
      rows.push(['effective parallelism', L.parallelism == null ? '–' : L.parallelism.toFixed(2), '']);
      g.append(el('div', 'kv', `GPU ${lane.lane} · ${lane.name || 'unknown'}`), table(['verdict', 'time', 'share'], rows));
    }
    const p = el('div', 'blk');
    p.append(el('h4', null, `${tag}kernels by process`),
      el('div', 'kv', `${fmtCount(st.kernels)} kernels · ${fmtTime(st.ns)} of kernel time inside · stretch ${fmtX(st.stretch)}`));
    p.append(dataTable(kern('process', {
      value: (q) => `pid ${q.pid}`,
      cell: (q) => { const n = el('span'); n.append(swatch(processColor(run, q.process)), ` pid ${q.pid}`); return n; },
    }), st.processes, 2, file('processes')));
    const v = el('div', 'blk');
    v.append(el('h4', null, `${tag}kernels by verdict`));
    if (!st.truncated) v.append(dataTable(kern('verdict', { value: (x) => S.verdicts[x.verdict], cell: (x) => badge(S.verdicts[x.verdict]) }), st.by_verdict || [], 2, file('verdicts')));
    const n = el('div', 'blk wide');
    n.append(el('h4', null, `${tag}kernels by name (${fmtCount(st.nnames || 0)})`));
    if (st.truncated) {
      n.append(el('div', 'warn', `more than a million kernels in this range: per-name figures and stretches need a shorter range (counts and times above are exact)`));
    } else {
      n.append(dataTable(kern('name', {
        value: (k) => k.name,
        cell: (k) => { const c = el('span', 'kname', shortName(k.name)); c.title = k.name; return c; },
      }), st.names, 2, file('kernel-names')));
      if (st.nnames > st.names.length) n.append(el('div', 'kv', `${fmtCount(st.nnames - st.names.length)} more names`));
    }
    box.append(g, p, v, n);
    if ((st.items || []).length) {
      const o = el('div', 'blk wide');
      o.append(el('h4', null, `${tag}copies, API calls and NVTX ranges by name`));
      if (st.items_truncated) o.append(el('div', 'warn', 'more than a million of them in this area: some rows left out, select fewer'));
      o.append(dataTable([
        { name: 'kind', value: (x) => ({ copy: 'copy', api: 'API call', nvtx: 'NVTX range' }[x.kind] || x.kind) },
        { name: 'name', value: (x) => x.name, cell: (x) => { const c = el('span', 'kname', x.name); c.title = x.name; return c; } },
        num('count', (x) => x.count, (x) => fmtCount(x.count)),
        num('time inside', (x) => x.ns, (x) => fmtTime(x.ns)),
        num('mean', (x) => (x.count ? x.ns / x.count : NaN), (x) => (x.count ? fmtTime(x.ns / x.count) : '–')),
      ], st.items, 3, file('records')));
      box.append(o);
    }
  });
  box.append(el('div', 'kv note', 'time inside: the kernels\' time within the range, summed over streams; mean: that time per kernel. Stretch: that time over the solo work done in it (each kernel\'s time / its solo reference), summed over the kernels with a solo reference — the one ratio of sums tlview uses everywhere (view/README.md); – when those hold less than half of the time. A kernel\'s verdict: its window\'s (the one holding most of it). Effective parallelism: solo work done per ns of the range (idle counts 0), the dark area of the concurrency track. Click a heading to sort.'));
}

// ------------------------------------------------------------------ help

// renderHelp fills the help overlay: the keys, how to read the drawing, and each verdict with
// its meaning and the rules that decided it in these runs (from GET /api/runs: verdict_meanings,
// rules, and each lane's by_verdict[].rule), then every rule.
function renderHelp() {
  const box = $('help-body');
  box.textContent = '';
  const keys = [
    ['ctrl + wheel, pinch', 'zoom at the pointer'], ['W / S, + / −', 'zoom in / out'],
    ['A / D, ← / →, shift + wheel', 'pan'], ['wheel', 'scroll the page'],
    ['drag on the timeline', 'select a time range: its statistics open below'],
    ['shift + drag', 'pan'], ['drag on the ruler', 'zoom to the dragged range'],
    ['F', 'fit the view to the selected range (or the selected kernel)'], ['0', 'show everything'],
    ['] / [', 'follow the selected record\'s flow: from an API call to what it launched / back to the launch'],
    ['drag across rows', 'select an area: the range over those rows only'], ['alt + drag on run B', 'align B on A by hand'],
    ['Enter / Shift + Enter in the search', 'next / previous match, every kind, in time order'],
    ['click', 'details of a kernel or an overlap window'], ['double click', 'zoom in'],
    ['/', 'find kernels by name'], ['Esc', 'clear the selection and close the panel'], ['?', 'this help'],
  ];
  const k = el('div', 'blk');
  k.append(el('h4', null, 'Keys and mouse'), table(['', ''], keys));
  const d = el('div', 'blk');
  d.append(el('h4', null, 'Reading the timeline'), table(['', ''], [
    [hatchSwatch(processColor(null, 0)), 'a kernel: solid for its solo reference length (how long it takes alone), hatched beyond: the stretch'],
    [swatch('rgba(47,111,208,0.35)'), 'concurrency track: processes with a kernel in flight (mean; line: peak)'],
    [swatch(PAR_COLOR), 'effective parallelism: solo work done per ns. Time-sliced: ~1 however many are in flight; side by side: about as many as are in flight'],
  ]));
  const v = el('div', 'blk wide');
  v.append(el('h4', null, 'Verdicts'));
  const decided = S.verdicts.map(() => new Set());
  for (const run of S.runs) {
    for (const lane of run.lanes) {
      for (const [name, bv] of Object.entries(lane.by_verdict || {})) {
        const i = S.verdicts.indexOf(name);
        if (i >= 0 && bv && bv.rule && bv.rule !== 'none') decided[i].add(bv.rule);
      }
    }
  }
  v.append(table(['verdict', 'meaning', 'decided in these runs by'], S.verdicts.map((name, i) => {
    const rules = [...decided[i]].map((r) => `${r}: ${S.rules[r] || ''}`).join('; ');
    return [badge(name), S.meanings[i] || '', rules || '–'];
  })));
  v.append(el('h4', null, 'Rules (the first that applies decides an overlap window)'));
  v.append(table(['rule', 'what it found'], Object.entries(S.rules).map(([r, txt]) => [r, txt])));
  const g = el('div', 'blk wide');
  const bounded = S.runs.filter((run) => run.summary.gain_bounds);
  if (bounded.length) {
    g.append(el('h4', null, 'What MPS would gain: the interval\'s bounds'));
    g.append(table(['', 'run', 'assumes'], bounded.flatMap((run) => [
      ['low', run.label, run.summary.gain_bounds.worst], ['high', run.label, run.summary.gain_bounds.best]])));
  }
  box.append(k, d, v, g);
}

// toggleHelp opens the help (filled anew) or closes it.
function toggleHelp() {
  const h = $('help');
  if (h.hidden) renderHelp();
  h.hidden = !h.hidden;
}

// ------------------------------------------------------------------ header, legend, stats

// renderHeader fills the header's chips: each run's label and counts, and the comparison.
function renderHeader() {
  const info = $('runinfo');
  info.textContent = '';
  if (S.runs.length > 2) { // an experiment's: one chip (its table names them), not a line each
    const c = el('span', 'chip');
    c.append(el('b', null, `${S.runs.length} runs`), ` one above the other · ${fmtCount(S.runs.reduce((n, r) => n + r.summary.kernels, 0))} kernels`);
    c.title = S.runs.map((r, ri) => `${runLetter(ri)}: ${r.label}`).join('\n');
    info.append(c);
    return;
  }
  S.runs.forEach((run, ri) => {
    const c = el('span', 'chip');
    const tag = S.runs.length > 1 ? `${runLetter(ri)}: ` : '';
    c.append(`${tag}`, el('b', null, midChars(run.label, 56)), ` · ${fmtCount(run.summary.kernels)} kernels · ${fmtTime(run.summary.span_ns)}`);
    c.title = run.label;
    info.append(c);
  });
  if (S.compare) {
    const c = el('span', 'chip');
    c.id = 'compare-chip';
    c.append(...compareWords(S.compare.measured_gain));
    c.title = `span of A ${fmtTime(S.compare.span_ns)}, of B ${fmtTime(S.compare.compare_span_ns)} (measured gain: A's span over B's, ${fmtX(S.compare.measured_gain)})`;
    info.append(c);
  }
}

// colorSetup offers colour by verdict first, and takes it by default, where a run overlapped
// (a lane with overlap or took-turns time): the verdicts are then what there is to see.
function colorSetup() {
  const overlap = S.runs.some((r) => r.lanes.some((l) => l.overlap_ns > 0 || l.verdict === 'time-sliced'));
  S.colorDefault = S.colorBy = overlap ? 'verdict' : 'process';
  const sel = $('colorby');
  if (overlap) sel.prepend(sel.querySelector('option[value=verdict]'));
  sel.value = S.colorBy;
}

// renderHeadline puts each run's headline sentences (the report's first lines) right under the
// header, above the timeline: what was found, before any scrolling.
function renderHeadline() {
  const box = $('headline');
  box.textContent = '';
  S.runs.forEach((run, ri) => {
    for (const line of run.headline || []) {
      const d = el('div', 'headline-line');
      if (S.runs.length > 1) d.append(el('b', null, `${runLetter(ri)}: `));
      d.append(line);
      d.title = line;
      box.append(d);
    }
  });
  box.hidden = !box.childNodes.length;
  box.classList.toggle('many', box.childNodes.length > 4); // scrolls within: the page's stays
}

// compareWords says how B's span compares with A's, the way round that is true: "B finishes
// 1.20× faster than A" when the measured gain (A's span / B's) is above 1, "1.20× slower" (its
// inverse) when below, "in the same time" when both round to 1.00×.
function compareWords(gain) {
  if (gain == null || !isFinite(gain) || gain <= 0) return ['B: no measured gain'];
  const faster = fmtX(gain).replace('×', ''), slower = fmtX(1 / gain).replace('×', '');
  if (faster === '1.00' && slower === '1.00') return ['B finishes ', el('b', null, 'in the same time'), ' as A'];
  return gain > 1 ? ['B finishes ', el('b', null, `${faster}× faster`), ' than A']
    : ['B finishes ', el('b', null, `${slower}× slower`), ' than A'];
}

// renderLegend fills the legend: the processes or the verdicts (as the kernels are coloured), the
// overlap windows, the concurrency track, the stretch, copies and hidden rows.
function renderLegend() {
  const lg = $('legend');
  lg.textContent = '';
  lg.append(el('span', 'title', S.colorBy === 'verdict' ? 'Kernels by verdict' : 'Processes'));
  if (S.colorBy === 'process') {
    S.runs.forEach((run, ri) => {
      run.processes.forEach((p, pi) => {
        if (!p.kernels) return;
        const it = el('span', 'item');
        it.append(swatch(processColor(run, pi)), `${S.runs.length > 1 ? runLetter(ri) + ' ' : ''}${pidText(p)}${p.mps === 'on' ? ' (MPS)' : ''}`);
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
  it.append(sw, 'processes with a kernel in flight (mean; line: peak)');
  it.title = 'The concurrency track\'s light area counts processes; its scale (in its label) is the most processes, contexts or parallelism the GPU reached';
  const par = el('span', 'item');
  par.append(swatch(PAR_COLOR), 'effective parallelism: solo work done per ns (kernels side by side in green contexts or streams count too)');
  const st = el('span', 'item');
  st.append(hatchSwatch(S.colorBy === 'verdict' ? VERDICT_COLORS['time-sliced'] : processColor(null, 0)), 'beyond the solo reference (stretch)');
  const help = el('span', 'item hint', 'press ? for help');
  lg.append(it, par, st, help);
  trackLegend(lg);
  arrangeLegend(lg);
}

// hatchSwatch is a small box striped as the stretched part of a kernel is drawn.
function hatchSwatch(color) {
  const s = el('span', 'sw');
  s.style.background = `repeating-linear-gradient(135deg, ${color} 0 2px, ${light(color)} 2px 5px)`;
  return s;
}

// table builds a table of head (column names) and rows (cells: text or Nodes).
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

// kpi is a figure of a card: its label, its value and, when given, a note saying what it counts.
function kpi(label, value, note) {
  const k = el('div', 'kpi');
  k.append(el('div', 'label', label), el('div', 'big', value));
  if (note) k.append(el('div', 'note', note));
  return k;
}

// badge is a verdict's word on its colour.
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

// renderStats fills the statistics below the timeline: the comparison, then per run its figures,
// headline, warnings, processes and per GPU its table and charts (GET /api/stats).
function renderStats(stats) {
  const box = $('stats');
  box.textContent = '';
  if (S.compare) {
    const card = el('div', 'card wide');
    card.append(el('h3', null, 'Comparison: A vs B'));
    const k = el('div', 'kpis');
    const c = S.compare;
    k.append(kpi('span A', fmtTime(c.span_ns)), kpi('span B', fmtTime(c.compare_span_ns)),
      kpi('measured gain (A\'s span / B\'s)', fmtX(c.measured_gain)),
      kpi('predicted from A', gainText(c.predicted_gain_low, c.predicted_gain, '–')),
      kpi('predicted at B\'s stretch', fmtX(c.predicted_gain_at_compare_stretch)),
      kpi('stretch A · B, all kernels', `${fmtX(c.stretch)} · ${fmtX(c.compare_stretch)}`));
    card.append(k);
    const said = el('div', 'kv headline');
    said.append(...compareWords(c.measured_gain));
    card.append(said);
    card.append(el('div', 'kv', `${c.common_signatures} kernel signatures in common; median duration ratio A/B ${fmtX(c.duration_ratio)}`));
    const [sa, sb] = S.runs.map((run) => run.summary);
    if (sa.process_spans > 1 && sb.process_spans > 1)
      card.append(el('div', 'kv', `processes' own spans: A ${fmtTime(sa.process_span_min_ns)} to ${fmtTime(sa.process_span_max_ns)} · B ${fmtTime(sb.process_span_min_ns)} to ${fmtTime(sb.process_span_max_ns)}; in B the longest over the shortest ${fmtX(sb.process_span_max_ns / sb.process_span_min_ns)} (the measured gain counts the process that ends last)`));
    if (c.compare_stretch != null)
      card.append(el('div', 'kv', `B's kernels took ${fmtX(c.compare_stretch)} their solo time; the prediction from A assumed solo speed side by side, ${fmtX(c.predicted_gain_at_compare_stretch)} at B's`));
    box.append(card);
  }
  stats.forEach((st, ri) => {
    const run = S.runs[ri];
    const card = el('div', 'card');
    card.append(el('h3', null, `${S.runs.length > 1 ? runLetter(ri) + ' · ' : ''}${run.label}`));
    const s = run.summary;
    const k = el('div', 'kpis');
    k.append(kpi('kernels', fmtCount(s.kernels)), kpi('span', fmtTime(s.span_ns)),
      kpi('overlap of busy', fmtPct(s.busy_ns ? s.overlap_ns / s.busy_ns : null)), // the headline's share
      kpi('stretch, all kernels', fmtX(s.stretch), 'their time over their solo time'),
      kpi(`MPS would gain${s.gain_basis === 'turns' ? ' (estimated)' : ''}`, gainText(s.predicted_gain_low, s.predicted_gain, '–')),
      kpi('GPU idle, measured', fmtPct(s.idle_share) + (s.host_paced ? ' · host-paced' : ''), // the headline's note
        `${fmtTime(s.idle_in_ns)} of the ${fmtTime(s.measured_span_ns)} measured with no kernel to run (context switches' gaps not counted)`),
      kpi('measured over', { range: 'the NVTX ranges', capture: 'the captured ranges', span: 'the time range', together: 'the processes running together' }[s.measure] || 'the whole recording'));
    card.append(k);
    for (const line of run.headline || []) card.append(el('div', 'kv headline', line));
    if (s.gain_bounds) { // what bounds "MPS would gain": the report's section of the same name
      const gb = el('details', 'gain-bounds');
      gb.append(el('summary', null, 'What bounds the predicted gain'),
        el('div', 'kv', s.gain_bounds.best), el('div', 'kv', s.gain_bounds.worst));
      card.append(gb);
    }
    for (const w of st.warnings) card.append(el('div', 'warn', w));
    card.append(el('h4', null, 'Processes'));
    const ranked = run.processes.some((p) => p.rank != null); // a rank column only for a job's ranks
    card.append(table(['process', 'kernels', 'contexts', 'kernel time', 'busy', 'in overlap', 'stretch, its kernels', 'MPS', ...(ranked ? ['rank'] : [])],
      run.processes.map((p) => {
        const name = el('span');
        name.append(swatch(processColor(run, p.id)), ` pid ${p.pid}`);
        return [name, fmtCount(p.kernels), p.contexts, fmtTime(p.kernel_ns), fmtTime(p.busy_ns),
          fmtPct(p.busy_ns ? p.overlap_ns / p.busy_ns : null), fmtX(p.stretch), p.kernels ? mpsText(p.mps) : '–',
          ...(ranked ? [rankText(p) || '–'] : [])];
      })));
    st.devices.forEach((sd) => {
      const d = run.lanes[sd.lane];
      const h = el('h4');
      h.append(`GPU ${sd.lane} · ${d.name || 'unknown'} `, badge(d.verdict));
      card.append(h);
      card.append(table(['busy', 'overlap', 'idle (span − busy)', 'peak procs · contexts', 'stretch while overlapped', 'contexts in flight', 'parallelism', 'MPS would gain'],
        [[fmtTime(d.busy_ns), fmtTime(d.overlap_ns), fmtTime(d.idle_ns), `${d.max_processes} · ${d.max_contexts}`,
          fmtStretch(d.stretch, d.basis), d.contexts_in_flight == null ? '–' : d.contexts_in_flight.toFixed(2),
          d.parallelism == null ? '–' : d.parallelism.toFixed(2), d.gain_basis === 'none' ? '–' : gainText(d.predicted_gain_low, d.predicted_gain, '–')]]));
      if (d.evidence) card.append(el('div', 'kv', d.evidence));
      const charts = el('div', 'charts');
      // by contexts where a process had several (green contexts): the unit the GPU shares
      const byCtx = (d.max_contexts || 0) > (d.max_processes || 0) && sd.ns_at_contexts;
      const lv = (byCtx ? sd.ns_at_contexts : sd.ns_at_processes) || [];
      const tot = lv.reduce((a, b) => a + b, 0) || 1;
      const c1 = el('canvas', 'chart');
      c1.dataset.kind = 'concurrency';
      c1.dataset.unit = byCtx ? 'contexts' : 'processes';
      const h1 = el('h4', null, `Concurrency: share of time with N ${byCtx ? 'contexts' : 'processes'} in flight`);
      charts.append(h1, c1);
      const c2 = el('canvas', 'chart');
      c2.dataset.kind = 'stretch';
      charts.append(el('h4', null, 'Stretch histogram (duration / solo reference, log scale)'), c2);
      card.append(charts);
      requestAnimationFrame(() => {
        barChart(c1, lv.map((x) => x / tot), lv.map((_, i) => `${i}`), (i) => (i >= 2 ? '#2f6fd0' : i === 1 ? '#8fb3e8' : '#c5ccd6'),
          { fmt: (v) => `${Math.round(v * 100)}%`, xlabel: byCtx ? 'contexts' : 'processes' });
        const hs = sd.stretch_histogram;
        if (hs) {
          const step = Math.log2(hs.hi / hs.lo) / hs.bins;
          const labels = hs.counts.map((_, i) => {
            const e = Math.log2(hs.lo) + i * step;
            return Math.abs(e - Math.round(e)) < 1e-9 ? `${+Math.pow(2, Math.round(e)).toPrecision(3)}` : null;
          });
          const one = -Math.log2(hs.lo) / step;
          // each bar coloured by the stretch at its middle, the same ramp for every run
          barChart(c2, hs.counts, labels, (i) => stretchColor(Math.pow(2, Math.log2(hs.lo) + (i + 0.5) * step)), {
            mark: one, integer: true, fmt: (v) => (v >= 1e6 ? `${+(v / 1e6).toPrecision(3)}M` : v >= 1e4 ? `${+(v / 1e3).toPrecision(3)}k` : `${v}`), xlabel: '×',
            empty: `no kernel has a solo reference (${hs.no_reference} without): give --baseline FILES of a solo run`,
          });
        }
      });
    });
    box.append(card);
  });
}

// updateStatus writes the status line: the view, its scale, how rows are drawn, the last query.
function updateStatus() {
  const nsPerPx = (S.t1 - S.t0) / plotWidth();
  const modes = S.data.map((d) => {
    let k = 0, b = 0;
    for (const r of d.rows.values()) { if (r.mode === 'bins') b++; else k++; }
    return `${k} rows one by one, ${b} aggregated`;
  });
  $('status').textContent = `view ${fmtTime(S.t0, 6)} – ${fmtTime(S.t1, 6)} · ${fmtTime(nsPerPx)}/px · ${modes.join(' | ')} · last query ${S.lastQueryMs.toFixed(0)} ms · ctrl+wheel or W/S zoom · A/D pan · drag: select · F fit · ? help`;
}
