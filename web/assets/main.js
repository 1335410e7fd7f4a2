// main.js: the page of `tlview serve`. Draws one or more analysed runs (two: a comparison; more:
// the configurations of an experiment, with its table: experiment.js) on a canvas: a lane per GPU
// with its concurrency track and overlap windows shaded by verdict, a row per process stream with
// its kernels; zoom, pan, hover, details, find, stats. The server does the level of detail (GET
// /api/timeline returns kernels or per-pixel aggregates), so the page only ever holds about one
// viewport's worth of data. View state lives in the URL hash. API: web/API.md.
// This file starts it: reads GET /api/runs, lays out and draws the first viewport, then the
// statistics, and wires the events. The page's scripts are classic scripts sharing one global
// scope (no modules; the CSP allows only this origin), in the order index.html lists: format,
// colors, api, rows, draw, tracks, tables, panels, search, align, arrange, export, experiment,
// input, jobgroup, follow, loading, main; the server sends them as one, app.js, their text in that
// order (web/embed_assets.cmake).
'use strict';

// ------------------------------------------------------------------ start

// main reads the runs once the server shows them, lays out and draws the first viewport, then the
// selections of the URL and the statistics.
async function main() {
  let meta;
  try {
    await jobOpen(); // a job's GPU group (jobgroup.js): loaded first
    await waitLoaded(); // a big run: the server answers while it reads it (loading.js)
    meta = await getJSON('api/runs');
  } catch (e) {
    if (!serverGone() && !e.shown) showError(`Cannot read the runs: ${e.message}`);
    return;
  }
  S.verdicts = meta.verdicts;
  S.meanings = meta.verdict_meanings || [];
  S.rules = meta.rules || {};
  S.runs = meta.runs;
  S.compare = meta.compare;
  S.follow = !!meta.follow;
  S.generation = meta.generation || 0;
  S.fullSpan = Math.max(1, ...S.runs.map((r) => r.summary.span_ns));
  colorSetup(); // before the hash: it says only what differs from the default
  const h = readHash();
  if (S.runs.length < 2) S.shift = [0, 0];
  arrangeInit(h);
  renderHeader();
  renderHeadline();
  experimentSetup(!!meta.experiment); // its table comes when it comes: the timeline does not wait
  alignSetup();
  exportSetup(meta.exports || ['json']);
  jobHeader();
  renderLegend();
  layout();
  if (isFinite(h.t0) && isFinite(h.t1) && h.t1 > h.t0) setView(h.t0, h.t1); else fitAll();
  clearTimeout(fetchTimer); // query now rather than after the debounce
  await fetchView();
  draw();
  drawHeld = false;
  S.ready = true;
  if (h.q) runFind();
  if (h.sel && h.sel.run < S.runs.length) showKernel(h.sel.run, h.sel.id);
  else if (h.item && h.item.run < S.runs.length) showItem(h.item.run, h.item.kind, h.item.id);
  if (h.range) selectRange(h.range.t0, h.range.t1, h.range.rows);
  await refreshStats();
  updateStatus();
  if (S.follow) setInterval(followTick, FOLLOW_POLL);
}

// refreshStats reads every run's GET /api/stats and renders them (again after a new generation).
async function refreshStats() {
  try {
    const stats = await Promise.all(S.runs.map((r, ri) => getStats(ri)));
    renderStats(stats);
  } catch (e) {
    if (e.name !== 'AbortError') showError(`Stats: ${e.message}`);
  }
}

for (const c of [canvas, pinned]) { // the timeline, and the pinned tracks over it (arrange.js)
  c.addEventListener('mousemove', onMove);
  c.addEventListener('mouseleave', onLeave);
  c.addEventListener('mousedown', onDown);
  c.addEventListener('wheel', onWheel, { passive: false });
  c.addEventListener('dblclick', (ev) => zoom(0.5, ev.clientX - canvas.getBoundingClientRect().left));
}
ruler.addEventListener('mousedown', onRulerDown);
ruler.addEventListener('wheel', onWheel, { passive: false });
window.addEventListener('mousemove', onDrag);
window.addEventListener('mouseup', onUp);
window.addEventListener('keydown', onKey);
window.addEventListener('scroll', () => { if (S.hover) { hideTooltip(); requestDraw(); } }, { passive: true });
window.addEventListener('resize', () => { resizeCanvases(); showTab(); scheduleFetch(); });
$('zoom-in').addEventListener('click', () => zoom(0.5));
$('zoom-out').addEventListener('click', () => zoom(2));
$('zoom-reset').addEventListener('click', fitAll);
$('colorby').addEventListener('change', (e) => { S.colorBy = e.target.value; renderLegend(); writeHash(); requestDraw(); });
$('find').addEventListener('input', scheduleFind);
$('find').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); findStep(e.shiftKey ? -1 : 1); } });
$('align').addEventListener('change', onAlignChange);
$('export-open').addEventListener('click', toggleExport);
document.addEventListener('click', (e) => { if (!e.target.closest('.menu-wrap')) $('export-menu').hidden = true; });
$('align-range').addEventListener('keydown', (e) => { if (e.key === 'Enter') alignOnRange(e.target.value); });
$('find-next').addEventListener('click', () => findStep(1));
$('find-prev').addEventListener('click', () => findStep(-1));
$('details-close').addEventListener('click', () => { clearRange(); closeDetails(); closeSearch(); });
$('details-body').addEventListener('click', onPanelLink);
$('tab-details').addEventListener('click', () => showTab('details'));
$('tab-range').addEventListener('click', () => showTab('range'));
$('tab-search').addEventListener('click', () => showTab('search'));
$('search-body').addEventListener('click', onSearchLink);
$('panel-collapse').addEventListener('click', toggleCollapse);
$('panel-grip').addEventListener('mousedown', onGripDown);
$('help-open').addEventListener('click', toggleHelp);
$('help-close').addEventListener('click', toggleHelp);
$('help').addEventListener('click', (e) => { if (e.target === $('help')) toggleHelp(); });
window.addEventListener('hashchange', () => {
  const h = readHash();
  if (isFinite(h.t0) && isFinite(h.t1) && h.t1 > h.t0 && (Math.round(h.t0) !== Math.round(S.t0) || Math.round(h.t1) !== Math.round(S.t1))) setView(h.t0, h.t1);
});
setInterval(() => { if (S.ready) updateStatus(); }, 500);

window.tlview = S; // for the browser tests and the curious
main();
