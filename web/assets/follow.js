// follow.js: the page of `tlview serve --follow`, whose files are still being written. Polls GET
// /api/generation; when the server has read the files again (a new generation), reads GET
// /api/runs again and redraws without a reload: the runs' processes, lanes and rows as they are
// now, the view kept where it was, or moved along when it showed the end of time (the latest
// kernels stay in sight), and the statistics read again.
'use strict';

// ------------------------------------------------------------------ constants

const FOLLOW_POLL = 1000; // ms between two looks at GET /api/generation

// ------------------------------------------------------------------ state

let followBusy = false; // a look or a reading of the runs is under way

// followTick looks at the server's generation and takes a new one in (setInterval, main.js).
async function followTick() {
  if (followBusy) return;
  followBusy = true;
  try {
    const g = await getJSON('api/generation');
    if (g.generation !== S.generation) await followApply();
  } catch (e) {
    // the server may be stopping or busy: look again at the next tick
  } finally {
    followBusy = false;
  }
}

// followSoon takes a new generation in now rather than at the next tick (a query answered 409).
function followSoon() {
  setTimeout(followTick, 0);
}

// followApply reads the runs of the current generation and shows them: the layout again, the
// view extended when it reached the end (or showed everything), the viewport and statistics
// asked again.
async function followApply() {
  const meta = await getJSON('api/runs');
  const oldFull = S.fullSpan;
  const all = S.t0 <= 0 && S.t1 >= oldFull; // the view showed the whole run
  const atEnd = S.t1 >= oldFull;            // ... or at least its end
  const procs = S.runs.map((r) => r.processes.map((p) => `${p.pid} ${p.file}`));
  S.generation = meta.generation;
  S.runs = meta.runs;
  S.compare = meta.compare;
  S.fullSpan = Math.max(1, ...S.runs.map((r) => r.summary.span_ns));
  // processes are indexed anew; keep a run's collapsed ones only while they are the same
  if (S.collapsed) S.collapsed = S.collapsed.map((set, ri) => (S.runs[ri] &&
    JSON.stringify(procs[ri]) === JSON.stringify(S.runs[ri].processes.map((p) => `${p.pid} ${p.file}`)) ? set : undefined));
  S.flow = null; // ids of records may have moved
  // the arrangement: the pins kept (lanes keep their numbers); hidden and moved rows let go, as
  // a new stream or thread renumbers the rows after it
  const pins = S.arrange && S.arrange.unpinned;
  arrangeInit(null);
  S.arrange.unpinned = pins;
  renderHeader();
  renderHeadline();
  renderLegend();
  layout();
  if (all) fitAll();
  else if (atEnd) setView(S.t0 + (S.fullSpan - oldFull), S.t1 + (S.fullSpan - oldFull));
  else setView(S.t0, S.t1);
  if (S.range) fetchRange();
  refreshStats();
}
