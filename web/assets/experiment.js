// experiment.js: the table of the experiment whose runs the page draws one above the other
// (`tlview serve DIR` of a `tlview advise` folder: one run per configuration). Above the
// timeline: the recommendation line, per configuration advise's figures under the names its text
// output gives them, the prediction's coverage (GET /api/experiment "result": the object `tlview
// advise --show DIR --format json` prints; the page formats as the text does, it never computes a
// figure), which run of it is drawn and how that run was chosen, and the notes. A click on a drawn
// configuration scrolls to its run.
// API: web/API.md.
'use strict';

/* interface Experiment {   // GET /api/experiment
 *   tool: 'tlview advise', dir, representative,   // how the run drawn was chosen, in words
 *   shown[] {config, label, run, round, dir, figure, note},  // per configuration; run: its
 *                                                            // index on the page, or null
 *   result {configs[], recommendation {text, ...}, notes[], figure_of_merit, metric, ...}
 * } */

// figText writes a figure with 4 significant digits, as advise's text does (19630, 1.963).
function figText(v) {
  if (v == null || !isFinite(v)) return '-';
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e9) return v.toFixed(Math.max(0, 3 - Math.floor(Math.log10(a))));
  return gText(v, 4);
}

// intervalText writes o's KEY_lo, KEY_hi and KEY_level as advise's text does: "9.94-10.2
// (96.9%)", ratios "1.48-1.56x (95.0%)"; '-' when not defined.
function intervalText(o, key, ratio) {
  const lo = o[`${key}_lo`], hi = o[`${key}_hi`], level = o[`${key}_level`];
  if (lo == null || hi == null || level == null) return '-';
  const pct = `(${(Math.floor(level * 1000) / 10).toFixed(1)}%)`;
  return ratio ? `${lo.toFixed(2)}-${hi.toFixed(2)}x ${pct}` : `${figText(lo)}-${figText(hi)} ${pct}`;
}

// pText writes a p-value with 2 significant digits ('-' when not compared).
function pText(p) {
  return p == null ? '-' : gText(p, 2);
}

// nsText writes a duration as advise's text does (cli_fmt_ns): "4.64 s", "913 ms", "12 us".
function nsText(ns) {
  if (ns == null) return '-';
  const a = Math.abs(ns);
  if (a >= 1e9) return `${gText(ns / 1e9, 3)} s`;
  if (a >= 1e6) return `${gText(ns / 1e6, 3)} ms`;
  if (a >= 1e3) return `${gText(ns / 1e3, 3)} us`;
  return `${ns.toFixed(0)} ns`;
}

// predictionText is advise's line on the prediction's coverage at one N (a "prediction" entry),
// with the prediction over the makespan where advise gives one.
function predictionText(o, traced) {
  const head = `MPS gain at N=${o.procs}: measured ${o.measured_gain == null ? '-' : `${o.measured_gain.toFixed(2)}x`}, interval ${intervalText(o, 'measured', true)}; `;
  if (!traced) return `${head}no prediction: measured without traces (--no-trace)`;
  if (o.predicted_gain_low == null) return `${head}no prediction: no time-sliced run left a trace`;
  const over = o.predicted_makespan_gain_low == null ? ''
    : `; that is over the traces' span, ${nsText(o.measured_span_ns)} of the ${nsText(o.makespan_ns)} makespan: with the rest as it was, ${gainText(o.predicted_makespan_gain_low, o.predicted_makespan_gain)} over the makespan${o.makespan_coverage ? `, the measured gain ${o.makespan_coverage} it` : ''}`;
  return `${head}\`tlview report\` predicted ${gainText(o.predicted_gain_low, o.predicted_gain)} from the time-sliced runs' traces${o.coverage ? `: ${o.coverage} the predicted interval` : ''}${over}`;
}

// experimentSetup reads GET /api/experiment when the server shows one (GET /api/runs
// "experiment") and puts its table above the timeline.
async function experimentSetup(has) {
  const box = $('experiment');
  box.hidden = !has;
  if (!has) return;
  try {
    S.experiment = await getJSON('api/experiment');
  } catch (e) {
    showError(`Experiment: ${e.message}`);
    return;
  }
  renderExperiment(S.experiment);
}

// scrollToRun brings run ri's header band into view, below what sticks at the top of the window
// (the page's header, the ruler, the pinned tracks).
function scrollToRun(ri) {
  const b = S.bands.find((x) => x.type === 'run' && x.run === ri);
  const over = ['top', 'ruler', 'pinned'].reduce((h, id) => h + ($(id).hidden ? 0 : $(id).getBoundingClientRect().height), 8);
  if (b) window.scrollTo({ top: canvas.getBoundingClientRect().top + window.scrollY + b.y - over });
}

// renderExperiment fills the experiment's box: its head, the recommendation, the table and the
// notes.
function renderExperiment(x) {
  const box = $('experiment'), r = x.result || {};
  box.textContent = '';
  const shown = new Map((x.shown || []).map((s) => [s.config, s]));
  const figure = r.figure_of_merit !== 'metric' ? 'copies completed per second of makespan'
    : r.combine === 'slowest' ? `the metric ${r.metric}, N times the slowest copy's` : `the metric ${r.metric} summed over the copies`;
  const head = el('div', 'exp-head');
  head.append(el('b', null, 'tlview advise'), ` · ${(r.configs || []).length} configurations, ${r.rounds_run} rounds · figure of merit: ${figure} (higher is better) · ${x.dir}`);
  const rec = el('div', 'exp-rec');
  rec.id = 'experiment-recommendation';
  rec.append(el('b', null, 'recommendation: '), (r.recommendation || {}).text || 'none');
  const drawn = (c) => shown.get(c.config) || {};
  const cols = [
    { name: 'config', value: (c) => c.name },
    { name: 'N', value: (c) => c.procs, num: true },
    { name: 'runs', value: (c) => `${c.ok}/${c.runs}` },
    { name: 'median', value: (c) => c.median, cell: (c) => figText(c.median), num: true },
    { name: 'interval', value: (c) => intervalText(c, 'median', false) },
    { name: 'ratio', value: (c) => c.ratio, cell: (c) => (c.ratio == null ? '-' : `${c.ratio.toFixed(2)}x`), num: true },
    { name: 'interval', value: (c) => intervalText(c, 'ratio', true) },
    { name: 'p(Holm)', value: (c) => c.p_holm, cell: (c) => pText(c.p_holm), num: true },
    { name: 'outcome', value: (c) => c.outcome, cell: (c) => el('span', `outcome-${c.outcome}`, c.outcome) },
    { name: 'verdict', value: (c) => c.verdict || '-' },
    { name: 'predicted', value: (c) => (c.kind === 'sliced' ? gainText(c.predicted_gain_low, c.predicted_gain) : '-') },
    {
      name: 'drawn',
      value: (c) => (drawn(c).run == null ? '' : runLetter(drawn(c).run)),
      cell: (c) => {
        const s = drawn(c);
        if (s.run == null) return el('span', 'exp-none', 'not drawn');
        const a = el('a', 'exp-run', `${runLetter(s.run)} · r${s.round}`);
        a.href = '#';
        a.title = `${s.label}: ${s.dir}, figure ${figText(s.figure)}`;
        a.addEventListener('click', (e) => { e.preventDefault(); scrollToRun(s.run); });
        return a;
      },
    },
  ];
  const tbl = dataTable(cols, r.configs || [], -1, 'advise-configs.csv');
  tbl.id = 'experiment-table';
  const how = el('div', 'exp-note', `Drawn below, one above the other: ${x.representative}.`);
  box.append(head, rec, tbl);
  for (const o of r.prediction || []) box.append(el('div', 'exp-pred', predictionText(o, r.trace)));
  box.append(how);
  for (const n of [...(x.shown || []).filter((s) => s.note).map((s) => s.note), ...(r.notes || [])]) box.append(el('div', 'exp-note', n));
}
