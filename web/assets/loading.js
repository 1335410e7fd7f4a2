// loading.js: the page's first seconds. `tlview serve` answers before its run is read and
// analysed (a big run takes seconds); until then the page shows what the server is doing (GET
// /api/status: the stage, its progress, the time so far) and draws the timeline as soon as the
// runs are shown. Should the server stop or fail meanwhile, the page says so.
'use strict';

// ------------------------------------------------------------------ constants

// ms between two looks at GET /api/status while loading: often at first (a run reopened from the
// cache is ready within a second, which a quarter-second poll would lengthen by up to a quarter),
// then less often (a long load is shown with its progress: four times a second is enough)
const LOAD_POLL_FAST = 40;
const LOAD_FAST_FOR = 3000; // ms after the first look
const LOAD_POLL = 250;

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
  const since = performance.now();
  for (;;) {
    const st = await getJSON('api/status');
    if (st.state === 'ready' || st.state === 'job' || st.state === 'failed') {
      $('loading').hidden = true;
      document.body.classList.remove('is-loading');
      if (st.state === 'failed') throw new Error(st.failure || 'the run could not be loaded');
      return;
    }
    showLoading(st);
    const fast = performance.now() - since < LOAD_FAST_FOR;
    await new Promise((ok) => setTimeout(ok, fast ? LOAD_POLL_FAST : LOAD_POLL));
  }
}
