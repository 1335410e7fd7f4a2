// test_page.js: the page of `tlview serve` in headless Chromium (playwright-core). Starts
// serve_fixture (generated runs), loads the page and checks: no console errors, the timeline is
// drawn (canvas pixels of the expected process and verdict colours), wheel and key zoom, hover
// tooltip text, click details, find, the view in the URL, the comparison view, and the rows of
// copies, API calls and NVTX ranges (drawn, nested, collapsed by a click on the process label,
// the flow arrow from an API call to its kernel on select). Usage:
// node test_page.js page|compare|demo|bench   (env: TLVIEW_BROWSER_DIR, TLVIEW_FIXTURE, CHROMIUM)
// `bench` is not a test: it serves 10M generated kernels and prints the browser-side time to the
// first drawn timeline and to a redrawn zoom.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const DIR = process.env.TLVIEW_BROWSER_DIR;
const { chromium } = require(path.join(DIR, 'node_modules', 'playwright-core'));
const CASE = process.argv[2] || 'page';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let failures = 0;
function check(cond, what) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  if (!cond) failures++;
}

function startFixture(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.env.TLVIEW_FIXTURE, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b) => {
      out += b;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve({ proc: p, url: m[1] });
    });
    p.on('exit', (code) => reject(new Error(`serve_fixture exited with ${code}`)));
    setTimeout(() => reject(new Error('serve_fixture did not print its URL')), 30000);
  });
}

// colourCounts counts canvas pixels (device pixels) near each of the given colours, in rows
// [y0, y1) of CSS px, right of the label gutter.
async function colourCounts(page, colours, y0, y1) {
  return page.evaluate(([colours, y0, y1]) => {
    const c = document.getElementById('timeline');
    const dpr = window.devicePixelRatio || 1;
    const x0 = Math.round(230 * dpr);
    const img = c.getContext('2d').getImageData(x0, Math.round(y0 * dpr), c.width - x0, Math.max(1, Math.round((y1 - y0) * dpr))).data;
    const rgb = colours.map((h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)]);
    const counts = colours.map(() => 0);
    let painted = 0;
    for (let i = 0; i < img.length; i += 4) {
      if (img[i + 3] > 0) painted++;
      for (let k = 0; k < rgb.length; k++) {
        if (Math.abs(img[i] - rgb[k][0]) < 6 && Math.abs(img[i + 1] - rgb[k][1]) < 6 && Math.abs(img[i + 2] - rgb[k][2]) < 6 && img[i + 3] > 250) counts[k]++;
      }
    }
    return { counts, painted, total: img.length / 4 };
  }, [colours, y0, y1]);
}

async function waitData(page, seqAfter) {
  await page.waitForFunction((s) => window.tlview.seq > s && window.tlview.data.length > 0 &&
    window.tlview.data[0].t0 === Math.floor(window.tlview.t0), seqAfter, { timeout: 15000 });
  await page.waitForTimeout(100);
}

async function main() {
  const args = { compare: ['--compare'], bench: ['--kernels', '10000000', '--procs', '16'], demo: ['serve', '--port', '0'] };
  const fixture = await startFixture(args[CASE] || []);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM, headless: true, args: FLAGS,
    viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1,
  });
  const errors = [];
  const page = browser.pages()[0] || await browser.newPage();
  // the server answers api/stats with 503 (Retry-After) until the statistics are built, and
  // Chromium logs that answer as a failed load: expected, the page asks again
  const statsPending = (m) => /status of 503/.test(m.text()) && /\/api\/stats\?run=\d+$/.test(m.location().url || '');
  page.on('console', (m) => { if (m.type() === 'error' && !statsPending(m)) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  // a stale viewport query aborted by the page is expected; any other failure is not
  page.on('requestfailed', (r) => { if (!/ABORTED/.test(r.failure().errorText)) errors.push(`request failed: ${r.url()} ${r.failure().errorText}`); });
  const external = [];
  page.on('request', (r) => { if (!r.url().startsWith(fixture.url)) external.push(r.url()); });
  try {
    if (CASE === 'bench') {
      await benchPage(page, fixture.url);
      return;
    }
    // the first api/stats request of the page case gets the server's "statistics pending" answer,
    // as just after start on a large run: the page must ask again after Retry-After
    const statsAsked = [];
    if (CASE === 'page') {
      await page.route(/\/api\/stats\?/, (route) => {
        statsAsked.push(Date.now());
        if (statsAsked.length > 1) return route.continue();
        return route.fulfill({ status: 503, headers: { 'Retry-After': '1', 'Content-Type': 'application/json' }, body: '{"error":"statistics pending"}' });
      });
    }
    await page.goto(fixture.url);
    await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 20000 });
    await page.waitForSelector('.card table', { timeout: 20000 });
    if (CASE === 'page') {
      check(statsAsked.length === 2 && statsAsked[1] - statsAsked[0] >= 900, `stats asked again ${statsAsked.length > 1 ? statsAsked[1] - statsAsked[0] : '-'} ms after a 503 with Retry-After: 1`);
      check(await page.locator('#error').isHidden(), 'no error shown for the pending statistics');
    }
    await page.waitForTimeout(300);
    const S = await page.evaluate(() => ({ runs: window.tlview.runs.length, bands: window.tlview.bands, t0: window.tlview.t0, t1: window.tlview.t1, kinds: window.tlview.runs.map((r) => r.rows.map((x) => x.kind)) }));
    // kernel rows (the copies, API and NVTX rows of each process are checked by testTracks)
    const rows = S.bands.filter((b) => b.type === 'row' && S.kinds[b.run][b.row] === 'kernels');
    if (CASE === 'page') {
      await testPage(page, S, rows);
      await testTracks(page, S);
    }
    else if (CASE === 'demo') await testDemo(page, S, rows);
    else await testCompare(page, S, rows);
    check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
    check(external.length === 0, `nothing fetched from elsewhere (${external.join(' ')})`);
  } finally {
    await browser.close();
    fixture.proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(`${failures === 0 ? 'PASS' : 'FAIL'}: browser ${CASE}, ${failures} failed checks`);
  process.exit(failures ? 1 : 0);
}

async function testPage(page, S, rows) {
  check(S.runs === 1, 'one run');
  check(rows.length === 8, `8 stream rows (4 processes x 2 streams), got ${rows.length}`);
  // drawn: every process colour appears in the rows, time-sliced red in the verdict strip
  const procColours = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759'];
  const y0 = rows[0].y, y1 = rows[rows.length - 1].y + rows[rows.length - 1].h;
  const c = await colourCounts(page, procColours, y0, y1);
  procColours.forEach((col, i) => check(c.counts[i] > 200, `process colour ${col} drawn (${c.counts[i]} px)`));
  const strip = S.bands.find((b) => b.type === 'vband');
  const v = await colourCounts(page, ['#d64541'], strip.y, strip.y + strip.h);
  check(v.counts[0] > 300, `time-sliced windows drawn in the verdict strip (${v.counts[0]} px)`);
  const conc = S.bands.find((b) => b.type === 'conc');
  const cc = await colourCounts(page, ['#2f5fa8'], conc.y, conc.y + conc.h);
  check(cc.counts[0] > 100, `concurrency peak line drawn (${cc.counts[0]} px)`);
  await page.screenshot({ path: path.join(DIR, 'page.png'), fullPage: true });

  // wheel zoom around the centre of the plot
  const box = await page.locator('#timeline').boundingBox();
  const before = await page.evaluate(() => window.tlview.t1 - window.tlview.t0);
  let seq = await page.evaluate(() => window.tlview.seq);
  await page.mouse.move(box.x + 230 + (box.width - 230) / 2, box.y + rows[0].y + 5);
  await page.mouse.wheel(0, -300);
  await waitData(page, seq);
  const after = await page.evaluate(() => window.tlview.t1 - window.tlview.t0);
  check(after < before * 0.7 && after > before * 0.45, `wheel zoom in: span ${before.toFixed(0)} -> ${after.toFixed(0)} ns`);
  seq = await page.evaluate(() => window.tlview.seq);
  await page.keyboard.press('-');
  await waitData(page, seq);
  const afterKey = await page.evaluate(() => window.tlview.t1 - window.tlview.t0);
  check(Math.abs(afterKey / after - 1 / 0.6) < 0.01, `key '-' zooms out by 1/0.6 (${after.toFixed(0)} -> ${afterKey.toFixed(0)})`);
  check(/t0=-?\d+&t1=\d+/.test(await page.evaluate(() => location.hash)), 'view state in the URL hash');
  // drag to pan: 200 px to the right shows earlier times by 200 px worth
  const v0 = await page.evaluate(() => [window.tlview.t0, window.tlview.t1]);
  const cy = box.y + rows[2].y + 5;
  await page.mouse.move(box.x + 600, cy);
  await page.mouse.down();
  await page.mouse.move(box.x + 700, cy, { steps: 4 });
  await page.mouse.move(box.x + 800, cy, { steps: 4 });
  await page.mouse.up();
  const v1 = await page.evaluate(() => [window.tlview.t0, window.tlview.t1]);
  const perPx = (v0[1] - v0[0]) / (box.width - 230);
  check(Math.abs((v0[0] - v1[0]) / perPx - 200) < 2 && Math.abs((v1[1] - v1[0]) - (v0[1] - v0[0])) < 1, `drag pans by 200 px (${((v0[0] - v1[0]) / perPx).toFixed(1)} px)`);

  // zoom onto one overlapped matmul kernel through the URL, then hover it
  const k = await page.evaluate(async () => {
    const r = await (await fetch('api/find?run=0&q=matmul&t0=20000000&limit=1')).json();
    return { s: r.kernels.s[0], d: r.kernels.d[0], row: r.kernels.row[0], id: r.kernels.id[0] };
  });
  seq = await page.evaluate(() => window.tlview.seq);
  await page.evaluate((k) => { location.hash = `#t0=${k.s - 2 * k.d}&t1=${k.s + 3 * k.d}`; }, k);
  await waitData(page, seq);
  const mode = await page.evaluate((row) => window.tlview.data[0].rows.get(row).mode, k.row);
  check(mode === 'kernels', `zoomed in, the row lists kernels (${mode})`);
  const band = rows.find((b) => b.row === k.row);
  const x = await page.evaluate((t) => 230 + (t - window.tlview.t0) * (document.getElementById('timeline').clientWidth - 230) / (window.tlview.t1 - window.tlview.t0), k.s + k.d / 2);
  await page.mouse.move(box.x + x, box.y + band.y + band.h / 2);
  await page.waitForTimeout(150);
  const tip = await page.evaluate(() => { const t = document.getElementById('tooltip'); return t.hidden ? '' : t.innerText; });
  check(tip.includes('matmul(float const*, float const*, float*, int)'), `tooltip names the demangled kernel (${tip.split('\n')[0]})`);
  check(/grid \(1024, 1, 1\) · block \(256, 1, 1\)/.test(tip), 'tooltip shows grid and block');
  check(/stretch ×[34]\.\d\d/.test(tip) && tip.includes('verdict time-sliced'), `tooltip shows stretch ~4 and the verdict (${tip.replace(/\n/g, ' / ')})`);
  await page.screenshot({ path: path.join(DIR, 'page-zoomed.png') });
  await page.mouse.down();
  await page.mouse.up();
  await page.waitForSelector('#details:not([hidden])', { timeout: 5000 });
  const details = await page.locator('#details-body').innerText();
  check(details.includes('effective parallelism') && details.includes('_Z6matmulPKfS0_Pfi'), 'click opens the details with the window evidence');
  // find
  await page.fill('#find', 'softmax');
  await page.waitForFunction(() => /in view/.test(document.getElementById('find-info').textContent), null, { timeout: 5000 });
  check(true, `find: ${await page.locator('#find-info').innerText()}`);
  const stats = await page.locator('#stats').innerText();
  check(stats.includes('pid 4100') && /time-sliced/i.test(stats), 'stats panel lists the processes and the verdict');
  check(await page.locator('canvas.chart').count() === 2, 'concurrency chart and stretch histogram present');
  // the run's summary, devices and processes come from api/runs only (api/stats holds the rest)
  const run = await page.evaluate(() => {
    const r = window.tlview.runs[0];
    return { kernels: r.summary.kernels.toLocaleString(), procs: r.processes.length, gpu: r.lanes[0].name };
  });
  const head = await page.locator('#runinfo').innerText();
  check(head.includes(`${run.kernels} kernels`), `header shows the summary's kernels (${head.replace(/\n/g, ' ')})`);
  check(stats.includes(`${run.kernels}`) && stats.includes(`GPU 0 · ${run.gpu}`), `stats show the summary and the lane (${run.kernels}, ${run.gpu})`);
  const procRows = await page.locator('#stats table').first().locator('tr').count();
  check(procRows === run.procs + 1, `processes table: a row per process of api/runs (${procRows - 1} of ${run.procs})`);
}

// canvasX is the canvas x (CSS px) of time t in the current view.
async function canvasX(page, t) {
  return page.evaluate((t) => 230 + (t - window.tlview.t0) * (document.getElementById('timeline').clientWidth - 230) / (window.tlview.t1 - window.tlview.t0), t);
}

// testTracks: the rows of copies, API calls and NVTX ranges of the page case's run (4 processes,
// each: a cudaLaunchKernel per kernel, a copy per 50 kernels, NVTX iteration > step > layer).
async function testTracks(page, S) {
  await page.evaluate(() => closeDetails());
  const tracks = S.bands.filter((b) => b.type === 'row' && S.kinds[b.run][b.row] !== 'kernels');
  const kinds = tracks.map((b) => S.kinds[0][b.row]);
  check(tracks.length === 12 && ['copies', 'api', 'nvtx'].every((k) => kinds.filter((x) => x === k).length === 4),
    `a copies, an API and an NVTX row per process (${kinds.join(' ')})`);
  // zoom onto one iteration: the API calls come one by one, the NVTX ranges on 3 levels
  const k = await page.evaluate(async () => {
    const r = await (await fetch('api/find?run=0&q=matmul&t0=20000000&limit=1')).json();
    return { s: r.kernels.s[0], d: r.kernels.d[0], row: r.kernels.row[0], id: r.kernels.id[0] };
  });
  let seq = await page.evaluate(() => window.tlview.seq);
  await page.evaluate((k) => { location.hash = `#t0=${k.s - 3 * k.d}&t1=${k.s + 2 * k.d}`; }, k);
  await waitData(page, seq);
  const L = await page.evaluate(() => {
    const S = window.tlview, out = {};
    for (const b of S.bands) {
      if (b.type !== 'row') continue;
      const row = S.runs[0].rows[b.row], R = S.data[0].rows.get(b.row);
      if (row.process !== 0 || !R) continue;
      out[row.kind === 'kernels' ? `k${row.stream}` : row.kind] = { band: b, mode: R.mode, z: R.z, id: R.id, s: R.s, d: R.d, name: R.name && R.name.map((n) => R.names[n]), depth: row.depth };
    }
    return out;
  });
  check(L.api && L.api.mode === 'items' && L.api.name.every((n) => n === 'cudaLaunchKernel' || /Async$/.test(n)), `API calls listed one by one (${L.api && L.api.mode}, ${L.api && L.api.id.length})`);
  check(L.nvtx && L.nvtx.mode === 'items' && L.nvtx.depth === 3 && [0, 1, 2].every((z) => L.nvtx.z.includes(z)),
    `NVTX ranges on 3 levels (${L.nvtx && L.nvtx.z.join(',')}: ${L.nvtx && L.nvtx.name.join(', ')})`);
  const apiPx = await colourCounts(page, ['#c9a13c'], L.api.band.y, L.api.band.y + L.api.band.h);
  check(apiPx.counts[0] > 20, `API calls drawn (${apiPx.counts[0]} px)`);
  const nvtxColours = ['#5b8e7d', '#8c6bb1', '#c07a3e', '#4f7cac', '#a35d6a', '#6d8f3a', '#3f8f9b', '#9a7b4f'];
  for (let z = 0; z < 3; z++) {
    const y = L.nvtx.band.y + 2 + z * 14;
    const c = await colourCounts(page, nvtxColours, y + 2, y + 10);
    const n = c.counts.reduce((a, b) => a + b, 0);
    check(n > 100, `NVTX level ${z} drawn in the ranges' colours (${n} px)`);
  }
  // hover an API call: its name; click it: its details and the arrow to its kernel
  const box = await page.locator('#timeline').boundingBox();
  const i = L.api.s.findIndex((s, j) => s > k.s - 2.5 * k.d && L.api.name[j] === 'cudaLaunchKernel');
  const xa = await canvasX(page, L.api.s[i] + L.api.d[i] / 2), ya = L.api.band.y + 2 + 6;
  await page.mouse.move(box.x + xa, box.y + ya);
  await page.waitForTimeout(150);
  const tip = await page.evaluate(() => { const t = document.getElementById('tooltip'); return t.hidden ? '' : t.innerText; });
  check(tip.includes('cudaLaunchKernel') && tip.includes('pid 4100'), `API call tooltip (${tip.replace(/\n/g, ' / ')})`);
  const region = async (f) => {
    const xs = [await canvasX(page, f.from.kind === 'api' ? f.from.end : f.partners[0].end), await canvasX(page, f.from.kind === 'api' ? f.partners[0].start : f.from.start)];
    const ys = S.bands.filter((b) => b.type === 'row' && (b.row === f.from.row || b.row === f.partners[0].row)).map((b) => [b.y, b.y + b.h]).flat();
    return page.evaluate(([x0, x1, y0, y1]) => {
      const c = document.getElementById('timeline');
      const img = c.getContext('2d').getImageData(Math.round(x0) - 2, Math.round(y0), Math.max(4, Math.round(x1 - x0) + 4), Math.round(y1 - y0)).data;
      let n = 0;
      for (let p = 0; p < img.length; p += 4) if (img[p] < 60 && img[p + 1] < 70 && img[p + 2] < 80 && img[p + 3] > 200) n++;
      return n;
    }, [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)]);
  };
  await page.mouse.down();
  await page.mouse.up();
  await page.waitForFunction(() => window.tlview.flow && window.tlview.flow.partners.length > 0, null, { timeout: 5000 });
  await page.waitForTimeout(200);
  const f = await page.evaluate(() => window.tlview.flow);
  check(f.from.kind === 'api' && f.partners.length === 1 && f.partners[0].kind === 'kernel' && f.partners[0].start > f.from.end,
    `select an API call: its kernel is the flow partner (${JSON.stringify(f.partners)})`);
  const title = await page.locator('#details-title').innerText();
  const body = await page.locator('#details-body').innerText();
  check(title === 'CUDA API call' && body.includes('cudaLaunchKernel') && /LAUNCHED/i.test(body), `API call details (${title}: ${body.replace(/\n/g, ' / ').slice(0, 120)})`);
  const dark = await region(f);
  await page.screenshot({ path: path.join(DIR, 'page-flow.png') });
  await page.evaluate(() => { window.tlview.flow = null; draw(); });
  const bare = await region(f);
  check(dark > bare + 20, `flow arrow drawn from the API call to its kernel (${dark} dark px, ${bare} without it)`);
  // select a kernel: the flow goes back to its API call
  await page.evaluate((id) => showKernel(0, id), f.partners[0].id);
  await page.waitForFunction(() => window.tlview.flow && window.tlview.flow.from.kind === 'kernel', null, { timeout: 5000 });
  const fk = await page.evaluate(() => window.tlview.flow);
  check(fk.partners.length === 1 && fk.partners[0].kind === 'api' && fk.partners[0].id === f.from.id, `select a kernel: its API call is the flow partner (${JSON.stringify(fk.partners)})`);
  // collapse pid 4101 by a click on its label, then expand it again
  await page.evaluate(() => closeDetails());
  const before = await page.evaluate(() => window.tlview.bands.filter((b) => b.type === 'row').length);
  const label = S.bands.find((b) => b.type === 'row' && b.first && b.run === 0 && S.kinds[0][b.row] === 'kernels' && b.y > L.nvtx.band.y);
  seq = await page.evaluate(() => window.tlview.seq);
  await page.mouse.click(box.x + 40, box.y + label.y + 8);
  await waitData(page, seq);
  const shut = await page.evaluate(() => ({ n: window.tlview.bands.filter((b) => b.type === 'row').length, c: [...window.tlview.collapsed[0]] }));
  check(shut.n === before - 3 && shut.c.length === 1 && shut.c[0] === 1, `click on pid 4101's label collapses its 3 rows (${before} -> ${shut.n} rows, collapsed ${shut.c})`);
  const asked = await page.evaluate(() => window.tlview.data[0].rows.size);
  check(asked === shut.n, `the viewport query asks for the rows shown only (${asked})`);
  await page.screenshot({ path: path.join(DIR, 'page-collapsed.png') });
  seq = await page.evaluate(() => window.tlview.seq);
  await page.mouse.click(box.x + 40, box.y + label.y + 8);
  await waitData(page, seq);
  const open = await page.evaluate(() => window.tlview.bands.filter((b) => b.type === 'row').length);
  check(open === before, `a second click expands them again (${open} rows)`);
}

async function testCompare(page, S, rows) {
  check(S.runs === 2, 'two runs');
  const heads = S.bands.filter((b) => b.type === 'run');
  check(heads.length === 2 && heads[1].y > heads[0].y, 'run B is drawn below run A');
  const rowsA = rows.filter((b) => b.run === 0), rowsB = rows.filter((b) => b.run === 1);
  check(rowsA.length === 8 && rowsB.length === 4, `rows A ${rowsA.length}, B ${rowsB.length}`);
  for (const [name, rs] of [['A', rowsA], ['B', rowsB]]) {
    const c = await colourCounts(page, ['#4e79a7', '#f28e2b'], rs[0].y, rs[rs.length - 1].y + ROWH(rs));
    check(c.counts[0] > 100 && c.counts[1] > 100, `run ${name} rows drawn (${c.counts.join(', ')} px)`);
  }
  const strips = S.bands.filter((b) => b.type === 'vband');
  const a = await colourCounts(page, ['#d64541'], strips[0].y, strips[0].y + strips[0].h);
  const b = await colourCounts(page, ['#2e9e4f'], strips[1].y, strips[1].y + strips[1].h);
  check(a.counts[0] > 300, `A (MPS off) shows time-sliced windows (${a.counts[0]} px)`);
  check(b.counts[0] > 300, `B (MPS on) shows concurrent windows (${b.counts[0]} px)`);
  const head = await page.locator('#runinfo').innerText();
  check(/faster than A/.test(head), `header shows the measured gain (${head.replace(/\n/g, ' ')})`);
  await page.screenshot({ path: path.join(DIR, 'compare.png'), fullPage: true });
}

// testDemo: `tlview serve` with no files shows the bundled H200 traces (4 processes, MPS off
// then on): time-sliced above, concurrent below.
async function testDemo(page, S, rows) {
  check(S.runs === 2, 'two runs (MPS off, MPS on)');
  const lanes = await page.evaluate(() => window.tlview.runs.map((r) => `${r.label}: ${r.lanes[0].verdict}`));
  check(/mps-off.*time-sliced/.test(lanes[0]) && /mps-on.*concurrent/.test(lanes[1]), `verdicts ${lanes.join('; ')}`);
  const strips = S.bands.filter((b) => b.type === 'vband');
  const a = await colourCounts(page, ['#d64541'], strips[0].y, strips[0].y + strips[0].h);
  const b = await colourCounts(page, ['#2e9e4f'], strips[1].y, strips[1].y + strips[1].h);
  check(a.counts[0] > 1000 && b.counts[0] > 200, `time-sliced (${a.counts[0]} px) and concurrent (${b.counts[0]} px) strips drawn`);
  const k = await colourCounts(page, ['#4e79a7', '#f28e2b', '#59a14f', '#e15759'], rows[0].y, rows[3].y + rows[3].h);
  check(k.counts.every((n) => n > 500), `the 4 kernels of run A drawn (${k.counts.join(', ')} px)`);
  await page.screenshot({ path: path.join(DIR, 'demo.png'), fullPage: true });
}

async function benchPage(page, url) {
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 60000, polling: 5 });
  const first = Date.now() - t0;
  const box = await page.locator('#timeline').boundingBox();
  const times = [], queries = [];
  for (let i = 0; i < 8; i++) {
    const seq = await page.evaluate(() => window.tlview.seq);
    const t = Date.now();
    await page.mouse.move(box.x + 700, box.y + 80);
    await page.mouse.wheel(0, -400);
    await page.waitForFunction((s) => window.tlview.seq > s && window.tlview.data[0].t0 === Math.floor(window.tlview.t0), seq, { timeout: 30000, polling: 5 });
    times.push(Date.now() - t);
    queries.push(Math.round(await page.evaluate(() => window.tlview.lastQueryMs)));
  }
  times.sort((a, b) => a - b);
  console.log(`browser: first timeline drawn ${first} ms after navigation; wheel zoom to new data drawn: median ${times[4]} ms, max ${times[7]} ms (includes the ${40} ms debounce); query round trips ${queries.join(' ')} ms`);
}

function ROWH(rs) { return rs[rs.length - 1].h; }

main().catch((e) => { console.error(`FAIL: ${e.stack || e}`); process.exit(1); });
