// job.js: the overview of a job served by `tlview serve --job` (web/API.md, "A job"): a heat map
// of the job's hosts (rows) and GPU groups (small cells, each coloured by its GPU's verdict once the
// server has analysed its group: GET /api/job, polled until every group is done), dense enough for
// 512 GPUs on one screen, with the verdicts counted, the hosts sorted by name or time-sliced share,
// filters by host, rank and verdict; below it, for a small job or on demand, a card per GPU with
// its ranks, pids and kernels. A click opens the GPU's timeline (/g/N/: the timeline page, its
// group loaded on demand). The hash names the group last opened (#group=N), which is marked.
'use strict';

// ------------------------------------------------------------------ constants

const JOB_POLL = 1000; // ms between two looks at GET /api/job while groups are being analysed
const CARDS_MAX = 48;  // jobs of at most this many GPU groups show their cards below the map

// ------------------------------------------------------------------ state

// Job: what GET /api/job said, the index kept from the first answer.
//   index: {files, processes, hosts, kernels, note, groups: [{group, host, kernels, gpus: [{uuid,
//           name, index}], ranks, pids, files}], no_gpu: [path]}
//   summaries: per group, null until analysed, else {group, gpus: [device], warnings, error?}
//   open: [{group, state, failure?}], report: the job report once every group is done, or null
const J = {
  index: null,
  summaries: [],
  open: [],
  report: null,
  analysed: 0,
  groups: 0,
  ready: false, // the grid is drawn (read by the browser tests)
  done: false,  // every group analysed
  filter: { host: '', ranks: null, verdict: null }, // what the map shows (the controls, the legend)
  sort: 'host', // hosts 'host' (by name) or 'share' (by time-sliced share, most first)
  cards: null,  // the detailed cards shown (by default for a job of at most CARDS_MAX groups)
};

const $ = (id) => document.getElementById(id);

// showError shows a message at the foot of the page for a few seconds.
function showError(msg) {
  const e = $('error');
  e.textContent = msg;
  e.hidden = false;
  setTimeout(() => { e.hidden = true; }, 6000);
}

// ------------------------------------------------------------------ data

// fetchJob reads GET /api/job (the index only the first time).
async function fetchJob() {
  const r = await fetch(J.index ? 'api/job?index=0' : 'api/job');
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || `${r.status}`);
  if (j.index) J.index = j.index;
  if (J.cards === null) J.cards = J.index.groups.length <= CARDS_MAX;
  J.summaries = j.summaries;
  J.open = j.open;
  J.report = j.report;
  J.analysed = j.analysed;
  J.groups = j.groups;
  J.done = j.analysed === j.groups;
}

// idsText writes sorted integers as ranges: "0-3,8".
function idsText(ids) {
  if (!ids || !ids.length) return '–';
  const out = [];
  for (let i = 0; i < ids.length; i++) {
    let k = i;
    while (k + 1 < ids.length && ids[k + 1] === ids[k] + 1) k++;
    out.push(k > i ? `${ids[i]}-${ids[k]}` : `${ids[i]}`);
    i = k;
  }
  return out.join(',');
}

// slicedShare is the share of a device's time in time-sliced windows (0 without any).
function slicedShare(d) {
  const b = d.by_verdict && d.by_verdict['time-sliced'];
  return b && b.share != null ? b.share : 0;
}

// cellDevice picks the device of a summary that colours its cell: the one with the largest
// time-sliced share (as the job report ranks them), the first on ties.
function cellDevice(summary) {
  let best = null;
  for (const d of summary.gpus || []) if (!best || slicedShare(d) > slicedShare(best)) best = d;
  return best;
}

// ------------------------------------------------------------------ drawing

// badge is a verdict word on its colour, as the timeline page shows it.
function badge(verdict) {
  const b = el('span', 'badge', verdict);
  b.style.background = VERDICT_COLORS[verdict] || '#999';
  return b;
}

// cellOf builds the cell of group g: a link to its timeline.
function cellOf(g) {
  const grp = J.index.groups[g];
  const s = J.summaries[g];
  const a = el('a', 'jcell');
  a.href = `g/${g}/`;
  a.dataset.group = g;
  const gpus = grp.gpus.map((d) => (d.index == null ? '?' : d.index)).join('+');
  const names = [...new Set(grp.gpus.map((d) => d.name || 'unknown GPU'))].join(', ');
  a.append(el('div', 'jgpu', `GPU ${gpus}`), el('div', 'jname', names));
  a.append(el('div', 'jwho', `ranks ${idsText(grp.ranks)} · pids ${idsText(grp.pids)}`));
  a.append(el('div', 'jwho', `${fmtCount(grp.kernels)} kernels · ${grp.files.length} file${grp.files.length === 1 ? '' : 's'}`));
  const v = el('div', 'jverdict');
  const d = s && !s.error ? cellDevice(s) : null;
  if (!s) {
    a.classList.add('pending');
    v.textContent = 'not analysed yet';
  } else if (s.error) {
    a.classList.add('failed');
    v.textContent = `cannot be analysed: ${s.error}`;
  } else if (!d) {
    v.textContent = s.no_kernels || 'no kernels';
  } else {
    a.style.borderColor = VERDICT_COLORS[d.verdict] || '#999';
    a.style.setProperty('--vc', VERDICT_COLORS[d.verdict] || '#999');
    a.classList.add('judged');
    a.dataset.verdict = d.verdict;
    v.append(badge(d.verdict));
    const share = slicedShare(d);
    const facts = [];
    if (share > 0) facts.push(`${fmtPct(share)} time-sliced`);
    if (d.stretch != null && d.basis !== 'none') facts.push(`stretch ${fmtX(d.stretch)}`);
    if (d.gain_basis && d.gain_basis !== 'none') facts.push(`MPS would gain ${gainText(d.predicted_gain_low, d.predicted_gain)}`);
    v.append(el('span', 'jfacts', facts.join(' · ')));
    a.title = d.evidence || '';
  }
  a.append(v);
  const o = J.open.find((x) => x.group === g);
  if (o) {
    const st = el('div', 'jstate', o.state === 'failed' ? `failed to open: ${o.failure}` : `timeline ${o.state}`);
    a.append(st);
  }
  if (readGroup() === g) a.classList.add('last');
  return a;
}

// readGroup is the group the hash names (#group=N), or null.
function readGroup() {
  const m = /(?:^|&)group=(\d+)/.exec(location.hash.slice(1));
  return m ? +m[1] : null;
}

// ------------------------------------------------------------------ the map

// hostOf is group g's host name as the overview names it.
function hostOf(g) {
  const h = J.index.groups[g].host;
  return h == null ? '(no host)' : h;
}

// parseRanks reads a rank filter: "5", "0-31", "3,8-9" (null for an empty or unreadable one).
function parseRanks(text) {
  const t = text.trim();
  if (!t) return null;
  const spans = [];
  for (const part of t.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
    if (!m) return null;
    spans.push([+m[1], m[2] == null ? +m[1] : +m[2]]);
  }
  return spans;
}

// shown: whether group g passes the filters (a host name containing the host filter, a rank in
// the rank filter, the verdict chosen in the legend).
function shown(g) {
  const f = J.filter;
  if (f.host && !hostOf(g).toLowerCase().includes(f.host.toLowerCase())) return false;
  if (f.ranks && !(J.index.groups[g].ranks || []).some((r) => f.ranks.some(([a, b]) => r >= a && r <= b))) return false;
  if (f.verdict) {
    const s = J.summaries[g], d = s && !s.error ? cellDevice(s) : null;
    const v = !s ? 'not analysed yet' : s.error ? 'failed' : d ? d.verdict : 'no kernels';
    if (v !== f.verdict) return false;
  }
  return true;
}

// groupShare is group g's time-sliced share (0 when not analysed yet, or none).
function groupShare(g) {
  const s = J.summaries[g], d = s && !s.error ? cellDevice(s) : null;
  return d ? slicedShare(d) : 0;
}

// hostOrder lists the hosts with their groups, sorted as asked: by name, or by the largest
// time-sliced share of their GPUs (most first, then by name).
function hostOrder() {
  const hosts = new Map();
  J.index.groups.forEach((grp, g) => {
    const h = hostOf(g);
    if (!hosts.has(h)) hosts.set(h, []);
    hosts.get(h).push(g);
  });
  const list = [...hosts.entries()].map(([name, groups]) => ({ name, groups, share: Math.max(0, ...groups.map(groupShare)) }));
  list.sort((a, b) => (J.sort === 'share' && b.share !== a.share ? b.share - a.share : a.name < b.name ? -1 : a.name > b.name));
  return list;
}

// verdictCounts counts the GPU groups by the verdict of their cell (and those not analysed yet).
function verdictCounts() {
  const n = {};
  J.index.groups.forEach((_, g) => {
    const s = J.summaries[g], d = s && !s.error ? cellDevice(s) : null;
    const v = !s ? 'not analysed yet' : s.error ? 'failed' : d ? d.verdict : 'no kernels';
    n[v] = (n[v] || 0) + 1;
  });
  return n;
}

// mapCell builds group g's cell of the heat map: its verdict's colour (a time-sliced GPU darker
// the larger its time-sliced share), its GPU index written in it, what it holds in its title;
// a link to its timeline.
function mapCell(g) {
  const grp = J.index.groups[g], s = J.summaries[g];
  const d = s && !s.error ? cellDevice(s) : null;
  const a = el('a', 'hcell');
  a.href = `g/${g}/`;
  a.dataset.group = g;
  const gpus = grp.gpus.map((x) => (x.index == null ? '?' : x.index)).join('+');
  a.textContent = gpus;
  let facts;
  if (!s) { a.classList.add('pending'); facts = 'not analysed yet'; }
  else if (s.error) { a.classList.add('failed'); facts = `cannot be analysed: ${s.error}`; }
  else if (!d) { a.classList.add('none'); facts = s.no_kernels || 'no kernels'; }
  else {
    const share = slicedShare(d);
    a.dataset.verdict = d.verdict;
    a.style.setProperty('--vc', VERDICT_COLORS[d.verdict] || '#999');
    // the share as depth: a little of the colour at 0, all of it at 100%
    a.style.setProperty('--vm', `${d.verdict === 'time-sliced' ? Math.round(35 + 65 * share) : 85}%`);
    a.classList.add('judged');
    facts = [d.verdict, share > 0 ? `${fmtPct(share)} time-sliced` : null, d.stretch != null && d.basis !== 'none' ? `stretch ${fmtX(d.stretch)}` : null,
      d.gain_basis && d.gain_basis !== 'none' ? `MPS would gain ${gainText(d.predicted_gain_low, d.predicted_gain)}` : null].filter(Boolean).join(' · ');
  }
  a.title = `group ${g} · ${hostOf(g)} GPU ${gpus} (${[...new Set(grp.gpus.map((x) => x.name || 'unknown GPU'))].join(', ')})\nranks ${idsText(grp.ranks)} · pids ${idsText(grp.pids)} · ${fmtCount(grp.kernels)} kernels\n${facts}`;
  if (readGroup() === g) a.classList.add('last');
  return a;
}

// renderMap draws the heat map: a row per host (sorted as asked), a small cell per GPU group,
// every group of a 512-GPU job on one screen (the rows flow in columns); the filtered out left
// out, and how many are shown said.
function renderMap() {
  const box = $('map');
  box.textContent = '';
  let n = 0;
  for (const h of hostOrder()) {
    const groups = h.groups.filter(shown);
    if (!groups.length) continue;
    const row = el('div', 'hrow');
    row.dataset.host = h.name;
    const name = el('div', 'hname', h.name);
    name.title = h.share > 0 ? `${h.name}: up to ${fmtPct(h.share)} time-sliced` : h.name;
    const cells = el('div', 'hcells');
    for (const g of groups) cells.append(mapCell(g));
    row.append(name, cells);
    box.append(row);
    n += groups.length;
  }
  $('shown').textContent = `${fmtCount(n)} of ${fmtCount(J.index.groups.length)} GPU group${J.index.groups.length === 1 ? '' : 's'} shown`;
}

// render draws the header, the legend (the verdicts with their counts: a click shows only that
// verdict's GPUs), the heat map, the cards of the GPUs shown (a small job's, or on demand) and
// the lists below.
function render() {
  const ix = J.index;
  const info = $('jobinfo');
  info.textContent = '';
  const rep = J.report && J.report.job;
  const chip = el('span', 'chip');
  chip.append(el('b', null, 'Job'), ` · ${fmtCount(ix.files)} files · ${fmtCount(ix.processes)} processes${rep && rep.ranks ? ` (${rep.ranks} ranks)` : ''} · ${ix.hosts} host${ix.hosts === 1 ? '' : 's'} · ${ix.groups.length} GPU group${ix.groups.length === 1 ? '' : 's'} · ${fmtCount(ix.kernels)} kernels`);
  info.append(chip);
  $('progress').textContent = J.done ? `every GPU analysed` : `analysing: ${J.analysed} of ${J.groups} GPUs`;
  $('note').textContent = ix.note || '';
  const lg = $('legend');
  lg.textContent = '';
  lg.append(el('span', 'title', 'GPUs by verdict'));
  const counts = verdictCounts();
  for (const v of ['solo', 'concurrent', 'time-sliced', 'contended', 'queued', 'unknown', 'not analysed yet', 'no kernels', 'failed']) {
    if (!counts[v] && VERDICT_COLORS[v] == null) continue;
    const it = el('button', `item vcount${J.filter.verdict === v ? ' on' : ''}`);
    it.dataset.verdict = v;
    it.title = J.filter.verdict === v ? 'show every verdict again' : `show only the GPUs ${v === 'not analysed yet' ? 'not analysed yet' : `judged ${v}`}`;
    it.append(swatch(VERDICT_COLORS[v] || '#c5ccd6'), `${v} `, el('b', null, fmtCount(counts[v] || 0)));
    lg.append(it);
  }
  lg.append(el('span', 'hint', 'click a GPU to open its timeline; time-sliced GPUs are darker the more of their time was'));
  renderMap();
  const grid = $('grid');
  grid.textContent = '';
  grid.hidden = !J.cards;
  $('cards').textContent = J.cards ? 'hide the cards' : 'show the cards';
  if (J.cards) {
    for (const h of hostOrder()) {
      const groups = h.groups.filter(shown);
      if (!groups.length) continue;
      const row = el('div', 'jhost');
      row.append(el('div', 'jhname', h.name));
      const cells = el('div', 'jcells');
      for (const g of groups) cells.append(cellOf(g));
      row.append(cells);
      grid.append(row);
    }
  }
  const ng = $('nogpu');
  ng.hidden = !ix.no_gpu.length;
  ng.textContent = '';
  if (ix.no_gpu.length) {
    ng.append(el('h3', null, `${ix.no_gpu.length} file${ix.no_gpu.length === 1 ? '' : 's'} ran no GPU work`));
    const ul = el('ul', 'jfiles');
    ix.no_gpu.forEach((p) => ul.append(el('li', 'mono', p)));
    ng.append(ul);
  }
  const ws = $('warnings');
  const warnings = J.report ? J.report.warnings : [];
  ws.hidden = !warnings.length;
  ws.textContent = '';
  if (warnings.length) {
    ws.append(el('h3', null, 'Warnings'));
    warnings.forEach((w) => ws.append(el('div', 'warn', w)));
  }
  J.ready = true;
}

// readControls takes the filters and the sort from the controls, and redraws.
function readControls() {
  J.filter.host = $('fhost').value.trim();
  J.filter.ranks = parseRanks($('franks').value);
  $('franks').classList.toggle('bad', !!$('franks').value.trim() && !J.filter.ranks);
  J.sort = $('sort').value;
  if (J.index) render();
}

// ------------------------------------------------------------------ start

// poll reads the job again and redraws, until every group is analysed.
async function poll() {
  try {
    await fetchJob();
    render();
  } catch (e) {
    showError(`Cannot read the job: ${e.message}`);
  }
  if (!J.done) setTimeout(poll, JOB_POLL);
}

for (const id of ['grid', 'map']) {
  $(id).addEventListener('click', (ev) => {
    const a = ev.target.closest('a.jcell, a.hcell');
    if (a) history.replaceState(null, '', `#group=${a.dataset.group}`); // marked when back
  });
}
$('legend').addEventListener('click', (ev) => {
  const b = ev.target.closest('button.vcount');
  if (!b) return;
  J.filter.verdict = J.filter.verdict === b.dataset.verdict ? null : b.dataset.verdict;
  render();
});
for (const id of ['fhost', 'franks']) $(id).addEventListener('input', readControls);
$('sort').addEventListener('change', readControls);
$('cards').addEventListener('click', () => { J.cards = !J.cards; render(); });
window.addEventListener('hashchange', () => { if (J.index) render(); });
window.tlviewJob = J; // for the browser tests and the curious
poll();
