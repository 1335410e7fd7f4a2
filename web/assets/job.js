// job.js: the overview of a job served by `tlview serve --job` (web/API.md, "A job"): the job's
// hosts as rows and their GPUs as cells, each cell coloured by its GPU's verdict once the server
// has analysed its group (GET /api/job, polled until every group is done), with the ranks, pids
// and kernels of the index meanwhile. A click opens the GPU's timeline (/g/N/: the timeline page,
// its group loaded on demand). The hash names the group last opened (#group=N), which is marked.
'use strict';

// ------------------------------------------------------------------ constants

const JOB_POLL = 1000; // ms between two looks at GET /api/job while groups are being analysed

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
};

const $ = (id) => document.getElementById(id);

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
  a.append(el('div', 'jwho', `${grp.kernels.toLocaleString()} kernels · ${grp.files.length} file${grp.files.length === 1 ? '' : 's'}`));
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
    if (d.gain_basis && d.gain_basis !== 'none') facts.push(`MPS would gain ${fmtGain(d.predicted_gain_low, d.predicted_gain)}`);
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

// render draws the header, the legend, the grid of hosts x GPUs and the lists below it.
function render() {
  const ix = J.index;
  const info = $('jobinfo');
  info.textContent = '';
  const rep = J.report && J.report.job;
  const chip = el('span', 'chip');
  chip.append(el('b', null, 'Job'), ` · ${ix.files.toLocaleString()} files · ${ix.processes.toLocaleString()} processes${rep && rep.ranks ? ` (${rep.ranks} ranks)` : ''} · ${ix.hosts} host${ix.hosts === 1 ? '' : 's'} · ${ix.groups.length} GPU group${ix.groups.length === 1 ? '' : 's'} · ${ix.kernels.toLocaleString()} kernels`);
  info.append(chip);
  $('progress').textContent = J.done ? `every GPU analysed` : `analysing: ${J.analysed} of ${J.groups} GPUs`;
  $('note').textContent = ix.note || '';
  const lg = $('legend');
  lg.textContent = '';
  lg.append(el('span', 'title', 'GPUs by verdict'));
  ['solo', 'concurrent', 'time-sliced', 'contended', 'queued', 'unknown'].forEach((v) => {
    const it = el('span', 'item');
    it.append(swatch(VERDICT_COLORS[v]), v);
    lg.append(it);
  });
  lg.append(el('span', 'hint', 'click a GPU to open its timeline'));
  // hosts in name order, each with its groups in group order
  const hosts = new Map();
  ix.groups.forEach((grp, g) => {
    const h = grp.host == null ? '(no host)' : grp.host;
    if (!hosts.has(h)) hosts.set(h, []);
    hosts.get(h).push(g);
  });
  const grid = $('grid');
  grid.textContent = '';
  for (const h of [...hosts.keys()].sort()) {
    const row = el('div', 'jhost');
    row.append(el('div', 'jhname', h));
    const cells = el('div', 'jcells');
    for (const g of hosts.get(h)) cells.append(cellOf(g));
    row.append(cells);
    grid.append(row);
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

$('grid').addEventListener('click', (ev) => {
  const a = ev.target.closest('a.jcell');
  if (a) history.replaceState(null, '', `#group=${a.dataset.group}`); // marked when back
});
window.addEventListener('hashchange', () => { if (J.index) render(); });
window.tlviewJob = J; // for the browser tests and the curious
poll();
