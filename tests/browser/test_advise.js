// test_advise.js: the page of `tlview serve DIR` for an experiment of `tlview advise` (4
// configurations of a stand-in program: solo, time-sliced, MPS and MPS at 50%, 3 rounds, traced):
// the 4 median runs are drawn one above the other, each under its configuration's label, and
// advise's table is visible above them with advise.json's figures and recommendation.
// node test_advise.js advise (env: TLVIEW_BROWSER_DIR, TLVIEW_FIXTURE: the tlview binary,
// CHROMIUM, TLVIEW_ADVISE_FAKE: tests/advise's fake_app, TLVIEW_RECORD_DIR: tests/record, whose
// stand-in nvidia-cuda-mps-control advise starts)
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const { DIR, chromium, FLAGS, state, check, start } = require('./harness');

const LABELS = ['solo', 'time-sliced n=2', 'MPS n=2', 'MPS 50% n=2'];

// makeExperiment runs `tlview advise` on the stand-in program into a new folder; returns it.
function makeExperiment() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-advise-'));
  const collector = path.join(tmp, 'libcollect.so');
  fs.writeFileSync(collector, '');
  const env = {
    ...process.env, TLVIEW_COLLECTOR: collector, TLVIEW_GPU_CHECK: '0',
    STANDIN_MPS_LOG: path.join(tmp, 'mps.log'), PATH: `${process.env.TLVIEW_RECORD_DIR}:${process.env.PATH}`,
    FAKE_WORK_MS: '30', FAKE_SEED: '1', FAKE_TRACE: '1', FAKE_GAIN_MPS: '2', FAKE_NOISE: '0.05',
    FAKE_STARTUP_MS: '100', // outside the traces: the prediction is given over the makespan too
  };
  for (const k of ['CUDA_MPS_PIPE_DIRECTORY', 'CUDA_MPS_LOG_DIRECTORY', 'CUDA_MPS_ACTIVE_THREAD_PERCENTAGE', 'CUDA_INJECTION64_PATH']) delete env[k];
  const dir = path.join(tmp, 'exp');
  const r = spawnSync(process.env.TLVIEW_FIXTURE, ['advise', '-n', '2', '--configs', 'sliced,mps,mps:50', '-r', '3',
    '-o', dir, '--', process.env.TLVIEW_ADVISE_FAKE], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tlview advise exited with ${r.status}: ${r.stderr}`);
  return dir;
}

async function main() {
  const dir = makeExperiment();
  const result = JSON.parse(fs.readFileSync(path.join(dir, 'advise.json'), 'utf8'));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM, headless: true, args: FLAGS,
    viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1,
  });
  const server = await start(['serve', '--port', '0', dir], 'tlview serve');
  const errors = [];
  const page = browser.pages()[0] || await browser.newPage();
  const statsPending = (m) => /status of 503/.test(m.text()) && /\/api\/stats\?run=\d+$/.test(m.location().url || '');
  page.on('console', (m) => { if (m.type() === 'error' && !statsPending(m)) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(server.open);
    await page.waitForFunction(() => window.tlview && window.tlview.ready && window.tlview.experiment && document.querySelector('#experiment-table tr td'), null, { timeout: 30000 });
    const S = await page.evaluate(() => ({
      labels: window.tlview.runs.map((r) => r.label),
      bands: window.tlview.bands.map((b) => ({ type: b.type, run: b.run, y: b.y, h: b.h })),
    }));
    check(S.labels.length === 4, `4 runs drawn (${S.labels.length})`);
    check(LABELS.every((l, i) => (S.labels[i] || '').startsWith(`${l} (r`)), `each labelled by its configuration, in advise's order: ${S.labels.join(' | ')}`);
    // one above the other: each run's header, then its own bands, then the next run's header
    const heads = S.bands.filter((b) => b.type === 'run');
    let ordered = heads.length === 4 && heads.every((b, i) => b.run === i && (i === 0 || b.y > heads[i - 1].y));
    for (const b of S.bands) {
      const h = heads[b.run], next = heads[b.run + 1];
      if (!h || b.y < h.y || (next && b.y + b.h > next.y)) ordered = false;
    }
    check(ordered, `the 4 runs' bands lie one above the other, each under its header (headers at y ${heads.map((b) => b.y).join(', ')})`);
    // the headers are painted, each with its run's letter and label
    const painted = await page.evaluate((ys) => {
      const c = document.getElementById('timeline');
      const x = c.getContext('2d');
      return ys.map((y) => Array.from(x.getImageData(c.width - 20, Math.round(y + 2), 1, 1).data.slice(0, 3)).join(','));
    }, heads.map((b) => b.y));
    check(painted.every((p) => p === '232,236,242'), `each run's header band is drawn (${painted.join(' ')})`);
    // the table: visible on the first screen, a row per configuration, advise.json's figures
    const table = await page.evaluate(() => {
      const t = document.querySelector('#experiment-table table');
      const r = t.getBoundingClientRect();
      return {
        top: r.top, bottom: r.bottom, width: r.width,
        head: Array.from(t.querySelectorAll('th')).map((th) => th.textContent),
        rows: Array.from(t.querySelectorAll('tr')).filter((tr) => tr.querySelector('td')).map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)),
        rec: document.getElementById('experiment-recommendation').textContent,
        pred: Array.from(document.querySelectorAll('#experiment .exp-pred')).map((n) => n.textContent),
        notes: Array.from(document.querySelectorAll('#experiment .exp-note')).map((n) => n.textContent),
      };
    });
    check(table.width > 0 && table.top >= 0 && table.bottom <= 900, `the table is visible on the first screen (y ${Math.round(table.top)} to ${Math.round(table.bottom)})`);
    check(table.rows.length === 4, `a row per configuration (${table.rows.length})`);
    const col = (name) => table.head.indexOf(name);
    const fig = (v) => { const a = Math.abs(v); return v.toFixed(Math.max(0, 3 - Math.floor(Math.log10(a)))); };
    const same = result.configs.every((c, i) => {
      const row = table.rows[i] || [];
      return row[col('config')] === c.name && row[col('runs')] === `${c.ok}/${c.runs}` && row[col('median')] === fig(c.median) &&
        row[col('outcome')] === c.outcome && (c.ratio == null || row[col('ratio')] === `${c.ratio.toFixed(2)}x`);
    });
    check(same, `the table's names, runs, medians, ratios and outcomes are advise.json's: ${table.rows.map((r) => r.slice(0, 4).join(' ')).join(' | ')}`);
    check(table.rows.every((r, i) => r[r.length - 1].startsWith(String.fromCharCode(65 + i))), `each configuration names the run drawn for it (${table.rows.map((r) => r[r.length - 1]).join(', ')})`);
    check(table.rec === `recommendation: ${result.recommendation.text}`, `the recommendation line is advise's (${table.rec.slice(0, 80)}…)`);
    // and the text advise prints: each row of its table, cell by cell, and its prediction line
    const shown = spawnSync(process.env.TLVIEW_FIXTURE, ['advise', '--show', dir], { encoding: 'utf8' }).stdout.split('\n');
    const words = (s) => s.trim().split(/\s+/).join(' ');
    const at = shown.findIndex((l) => /^config +N +runs +median/.test(l));
    const text = shown.slice(at + 1, at + 5).map(words), mine = table.rows.map((r) => words(r.slice(0, -1).join(' ')));
    check(at >= 0 && text.every((l, i) => l === mine[i]), `the table reads as \`tlview advise --show\` prints it:\n  ${mine.join('\n  ')}\n  vs\n  ${text.join('\n  ')}`);
    const predLine = shown.find((l) => l.startsWith('MPS gain at N=2: '));
    check(predLine && table.pred.length === 1 && table.pred[0] === predLine && / over the makespan/.test(predLine),
      `the prediction's line is advise's, over the makespan too (${table.pred[0]})`);
    check(table.notes.some((n) => /median run/.test(n) && /nearest the configuration's median/.test(n)), 'the page says which run of each configuration is drawn, and why');
    await page.screenshot({ path: path.join(DIR, 'advise.png'), fullPage: true });
    // a click on the run drawn of the last configuration scrolls its header into view
    await page.click('#experiment-table a.exp-run >> nth=3');
    await page.waitForTimeout(300);
    const seen = await page.evaluate(() => {
      const b = window.tlview.bands.find((x) => x.type === 'run' && x.run === 3);
      const y = document.getElementById('timeline').getBoundingClientRect().top + b.y;
      const below = Math.max(...['top', 'ruler', 'pinned'].filter((id) => !document.getElementById(id).hidden).map((id) => document.getElementById(id).getBoundingClientRect().bottom));
      return { y, below, h: window.innerHeight, scrolled: window.scrollY };
    });
    check(seen.scrolled > 0 && seen.y >= seen.below && seen.y < seen.h / 2, `a click on D in the table brings run D's header into view, below the header, ruler and pinned tracks (at y ${Math.round(seen.y)}, they end at ${Math.round(seen.below)}, scrolled ${Math.round(seen.scrolled)})`);
    check(errors.length === 0, `no console errors${errors.length ? `: ${errors.join(' | ')}` : ''}`);
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
  console.log(state.failures ? `${state.failures} failed` : 'all passed');
  process.exit(state.failures ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
