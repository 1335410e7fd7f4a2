// loading.js: the page's first seconds. `tlview serve` answers before its run is read and
// analysed (a big run takes seconds); until then the page shows what the server is doing (GET
// /api/status: the stage, its progress, the time so far) and draws the timeline as soon as the
// runs are shown. Should the server stop or fail meanwhile, the page says so.
'use strict';

// ------------------------------------------------------------------ constants

const LOAD_POLL = 250; // ms between two looks at GET /api/status while loading

// ------------------------------------------------------------------ state

const loadingSeen = []; // the stages shown while loading (read by the browser tests)

// showLoading shows the server's state st (GET /api/status) in the loading box.
function showLoading(st) {
  const box = $('loading');
  box.hidden = false;
  document.body.classList.add('is-loading');
  box.textContent = '';
  const secs = (st.elapsed_ms / 1000).toFixed(1);
  box.append(el('div', 'load-title', 'tlview is reading the run'), el('div', 'load-stage', st.stage || 'starting'));
  const bar = el('div', 'load-bar');
  const counted = st.total > 1; // one file of one says nothing of its progress
  const fill = el('div', counted ? 'load-fill' : 'load-fill busy');
  if (counted) fill.style.width = `${Math.min(100, 100 * st.done / st.total).toFixed(1)}%`;
  bar.append(fill);
  box.append(bar, el('div', 'load-note', `${secs} s so far. The timeline appears as soon as the run is read, analysed and indexed; the statistics follow.`));
  if (loadingSeen[loadingSeen.length - 1] !== st.stage) loadingSeen.push(st.stage);
}

// waitLoaded returns once the server shows its runs (or serves a job group), showing meanwhile
// what it does; throws with the reason when they will not come.
async function waitLoaded() {
  for (;;) {
    const st = await getJSON('api/status');
    if (st.state === 'ready' || st.state === 'job' || st.state === 'failed') {
      $('loading').hidden = true;
      document.body.classList.remove('is-loading');
      if (st.state === 'failed') throw new Error(st.failure || 'the run could not be loaded');
      return;
    }
    showLoading(st);
    await new Promise((ok) => setTimeout(ok, LOAD_POLL));
  }
}
