// test_job.js: the job overview of `tlview serve --job` in headless Chromium (playwright-core).
// Writes a synthetic job (bench_job_gen: 3 hosts x 2 GPUs x 2 ranks, every other GPU under MPS,
// host 0's GPU 0 big enough that its summary comes late), serves it and checks: the overview
// answers before the summaries are done (cells "not analysed yet"), a row per host and a cell per
// GPU with its ranks, pids and kernels, the cells coloured by their verdicts once analysed (the
// colours of colors.js, the words of the report), a click on a cell opens that GPU's timeline
// (drawn, its group in the URL), a reload of it works, the link back returns to the overview with
// the group marked; no console errors, nothing fetched from elsewhere. Screenshots:
// job.png, job_group.png in TLVIEW_BROWSER_DIR. Usage: node test_job.js job
//   (env: TLVIEW_BROWSER_DIR, TLVIEW_FIXTURE = tlview, TLVIEW_JOB_GEN = bench_job_gen, CHROMIUM)
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const { DIR, chromium, FLAGS, state, check, start, checkToken } = require('./harness');
const VERDICT_RGB = { 'time-sliced': 'rgb(214, 69, 65)', concurrent: 'rgb(46, 158, 79)' };
const startServer = (args) => start(args, 'tlview serve');

// heat: a job of 512 GPUs (64 hosts x 8 GPUs x 2 ranks, every third GPU under MPS) on one
// screen of 1600x1000 (issue 31, item 10): a cell per GPU group in the heat map, every one inside
// the window without scrolling; the verdicts counted as the summaries have them; the hosts sorted
// by time-sliced share; filters by host, rank and verdict; a GPU's page opened from its cell; a
// group number the job does not have, and a malformed one, give a page that says so and leads
// back.
async function heat() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-job-'));
  const job = path.join(work, 'job');
  fs.mkdirSync(job);
  execFileSync(process.env.TLVIEW_JOB_GEN, [job, '-H', '64', '-g', '8', '-r', '2', '-k', '40', '-m', '3'], { stdio: 'ignore' });
  const server = await startServer(['serve', '--job', '--port', '0', job]);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM, headless: true, args: FLAGS,
    viewport: { width: 1600, height: 1000 }, deviceScaleFactor: 1,
  });
  const errors = [];
  const page = browser.pages()[0] || await browser.newPage();
  const expected = (m) => /status of (503|404)/.test(m.text());
  page.on('console', (m) => { if (m.type() === 'error' && !expected(m)) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(server.open);
    await page.waitForFunction(() => window.tlviewJob && window.tlviewJob.done, null, { timeout: 150000 });
    await page.waitForTimeout(200);
    const fit = await page.evaluate(() => {
      const cells = [...document.querySelectorAll('.hcell')];
      const out = cells.filter((c) => { const r = c.getBoundingClientRect(); return r.top < 0 || r.left < 0 || r.bottom > window.innerHeight || r.right > window.innerWidth || r.width < 10; });
      return { n: cells.length, out: out.length, groups: new Set(cells.map((c) => c.dataset.group)).size, scroll: document.documentElement.scrollHeight > window.innerHeight };
    });
    check(fit.n === 512 && fit.groups === 512 && fit.out === 0, `512 GPU groups on one screen of 1600x1000: ${fit.n} cells, ${fit.out} outside the window`);
    await page.screenshot({ path: path.join(DIR, 'job-512.png') });
    // the verdict counts, as the summaries have them
    const j = await page.evaluate(async () => (await fetch('api/job?index=0')).json());
    const want = {};
    for (const s of j.summaries) {
      const d = s.gpus.reduce((best, x) => (!best || ((x.by_verdict['time-sliced'] || {}).share || 0) > ((best.by_verdict['time-sliced'] || {}).share || 0) ? x : best), null);
      want[d.verdict] = (want[d.verdict] || 0) + 1;
    }
    const counts = await page.$$eval('#legend button.vcount', (bs) => Object.fromEntries(bs.map((b) => [b.dataset.verdict, +b.querySelector('b').textContent.replace(/,/g, '')])));
    check(Object.keys(want).length >= 2 && Object.entries(want).every(([v, n]) => counts[v] === n), `the verdicts counted: ${JSON.stringify(counts)} (the summaries: ${JSON.stringify(want)})`);
    const map = await page.$$eval('.hcell', (cs) => cs.map((c) => [c.dataset.verdict, getComputedStyle(c).borderColor]));
    check(map.every(([v, c]) => (v === 'time-sliced' ? c === VERDICT_RGB['time-sliced'] : v === 'concurrent' ? c === VERDICT_RGB.concurrent : true)), 'each cell in its verdict\'s colour');
    // sort by time-sliced share: the hosts' largest shares, most first
    await page.selectOption('#sort', 'share');
    const shares = await page.evaluate(() => [...document.querySelectorAll('.hrow')].map((r) => Math.max(...[...r.querySelectorAll('.hcell')].map((c) => groupShare(+c.dataset.group)))));
    check(shares.length === 64 && shares.every((v, i) => !i || shares[i - 1] >= v) && shares[0] > shares[63], `hosts sorted by time-sliced share (${shares[0].toFixed(3)} first, ${shares[63].toFixed(3)} last)`);
    // filters: a host, ranks, a verdict
    const ix = (await page.evaluate(async () => (await fetch('api/job')).json())).index;
    await page.fill('#fhost', 'node013');
    let cells = await page.$$eval('.hcell', (cs) => cs.map((c) => +c.dataset.group));
    check(cells.length === 8 && cells.every((g) => ix.groups[g].host === 'node013'), `host "node013": its ${cells.length} GPUs`);
    await page.fill('#fhost', '');
    await page.fill('#franks', '32-47');
    cells = await page.$$eval('.hcell', (cs) => cs.map((c) => +c.dataset.group));
    const inRanks = ix.groups.map((g, i) => [i, g.ranks]).filter(([, r]) => r.some((x) => x >= 32 && x <= 47)).map(([i]) => i);
    check(cells.length === inRanks.length && cells.length === 8 && cells.every((g) => inRanks.includes(g)), `ranks 32-47: the ${cells.length} GPUs that ran them`);
    await page.fill('#franks', '');
    await page.click('#legend button.vcount[data-verdict="concurrent"]');
    cells = await page.$$eval('.hcell', (cs) => cs.map((c) => c.dataset.verdict));
    check(cells.length === want.concurrent && cells.every((v) => v === 'concurrent'), `a click on "concurrent" shows its ${cells.length} GPUs only`);
    check(/of 512 GPU groups shown/.test(await page.locator('#shown').innerText()), `the map says how many it shows (${await page.locator('#shown').innerText()})`);
    await page.click('#legend button.vcount[data-verdict="concurrent"]');
    // a cell opens its GPU's timeline
    await page.click('.hcell[data-group="100"]');
    await page.waitForURL(/\/g\/100\/$/, { timeout: 10000 });
    await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 30000 });
    check(/^group 100:/.test(await page.evaluate(() => window.tlview.runs[0].label)), 'a cell opens its GPU\'s timeline');
    // no such group: a page, not JSON
    const bad = await page.goto(new URL('/g/9999/', server.url).href);
    await page.waitForSelector('#loading:not([hidden])', { timeout: 10000 });
    const text = await page.locator('#loading').innerText();
    check(bad.headers()['content-type'].startsWith('text/html') && /No GPU group 9999/.test(text) && /the job has 512/.test(text), `/g/9999/: a page (${bad.headers()['content-type']}): ${text.replace(/\n/g, ' / ')}`);
    await page.click('#job-back');
    await page.waitForFunction(() => window.tlviewJob && window.tlviewJob.ready, null, { timeout: 20000 });
    check(true, 'its link leads back to the overview');
    const typo = await page.goto(new URL('/g/x1/', server.url).href);
    check(typo.status() === 404 && typo.headers()['content-type'].startsWith('text/html') && /No such page/.test(await page.textContent('body')), `/g/x1/: a page too (${typo.status()}, ${typo.headers()['content-type']})`);
    check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log(`${state.failures} failed`);
  process.exit(state.failures ? 1 : 0);
}

async function main() {
  if (process.argv[2] === 'heat') return heat();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-job-'));
  const job = path.join(work, 'job');
  fs.mkdirSync(job);
  execFileSync(process.env.TLVIEW_JOB_GEN, [job, '-H', '3', '-g', '2', '-r', '2', '-k', '60', '-m', '2', '-b', '100000'], { stdio: 'ignore' });
  const want = JSON.parse(execFileSync(process.env.TLVIEW_FIXTURE, ['job', '--format', 'json', job]));
  const t0 = Date.now();
  const server = await startServer(['serve', '--job', '--port', '0', job]);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM, headless: true, args: FLAGS,
    viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1,
  });
  const errors = [], external = [];
  const page = browser.pages()[0] || await browser.newPage();
  // api/stats answers 503 until built and a group not open yet answers 404: both expected
  const expected = (m) => /status of (503|404)/.test(m.text());
  page.on('console', (m) => { if (m.type() === 'error' && !expected(m)) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('requestfailed', (r) => { if (!/ABORTED/.test(r.failure().errorText)) errors.push(`request failed: ${r.url()} ${r.failure().errorText}`); });
  page.on('request', (r) => { if (!r.url().startsWith(server.url)) external.push(r.url()); });
  try {
    // the overview as it is before the summaries are done: the first GET /api/job answer with
    // every summary but group 1's left out (the server may be done before Chromium is up; that
    // state is checked against the server itself by tests/job/serve.py)
    let firstJob = true;
    await page.route(/\/api\/job(\?index=0)?$/, async (route) => {
      if (!firstJob) return route.continue();
      firstJob = false;
      const r = await route.fetch();
      const j = await r.json();
      j.summaries = j.summaries.map((s, g) => (g === 1 ? s : null));
      j.analysed = j.summaries.filter((s) => s).length;
      j.report = null;
      return route.fulfill({ response: r, json: j });
    });
    await page.goto(server.open);
    await page.waitForFunction(() => window.tlviewJob && window.tlviewJob.ready, null, { timeout: 20000 });
    const early = await page.evaluate(() => ({ analysed: window.tlviewJob.analysed, pending: document.querySelectorAll('.jcell.pending').length, text: document.querySelector('.jcell.pending .jverdict')?.textContent }));
    check(early.analysed === 1 && early.pending === 5 && early.text === 'not analysed yet', `the overview shown ${Date.now() - t0} ms after the server started (Chromium start included), before the summaries: ${early.analysed} of 6 analysed, ${early.pending} cells "${early.text}"`);
    const hosts = await page.$$eval('.jhost', (rows) => rows.map((r) => [r.querySelector('.jhname').textContent, r.querySelectorAll('.jcell').length]));
    check(JSON.stringify(hosts) === JSON.stringify([['node000', 2], ['node001', 2], ['node002', 2]]), `a row per host, a cell per GPU: ${JSON.stringify(hosts)}`);
    const cell3 = await page.textContent('.jcell[data-group="3"]');
    check(/GPU 1/.test(cell3) && /ranks 6-7/.test(cell3) && /pids 20002-20003/.test(cell3) && /120 kernels/.test(cell3), `group 3's cell: ${cell3}`);
    await page.waitForFunction(() => window.tlviewJob.done, null, { timeout: 60000 });
    await page.waitForTimeout(200);
    const cells = await page.$$eval('.jcell', (cs) => cs.map((c) => ({ g: +c.dataset.group, v: c.dataset.verdict, colour: getComputedStyle(c).borderLeftColor, badge: c.querySelector('.badge')?.textContent })));
    for (const gpu of want.gpus) {
      const c = cells.find((x) => x.g === gpu.group);
      check(c && c.v === gpu.verdict && c.badge === gpu.verdict && c.colour === VERDICT_RGB[gpu.verdict], `group ${gpu.group}: ${c && c.badge} in ${c && c.colour} (report: ${gpu.verdict})`);
    }
    check(await page.textContent('#note') === want.job.note, 'the note: times compared only within one GPU');
    check(/every GPU analysed/.test(await page.textContent('#progress')), 'the progress says every GPU is analysed');
    await checkToken(page, server, 'api/job?index=0');
    await page.screenshot({ path: path.join(DIR, 'job.png'), fullPage: true });
    // a GPU's timeline
    await page.click('.jcell[data-group="2"]');
    await page.waitForURL(/\/g\/2\/$/, { timeout: 10000 });
    await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 30000 });
    const tl = await page.evaluate(() => ({ label: window.tlview.runs[0].label, kernels: window.tlview.runs[0].summary.kernels, lanes: window.tlview.runs[0].lanes.map((l) => l.verdict) }));
    const g2 = want.gpus.find((x) => x.group === 2);
    check(/^group 2: node001/.test(tl.label) && tl.kernels === g2.kernels && tl.lanes[0] === g2.verdict, `group 2's timeline: ${tl.label}, ${tl.kernels} kernels, ${tl.lanes}`);
    await page.waitForSelector('.card table', { timeout: 20000 });
    await page.screenshot({ path: path.join(DIR, 'job_group.png') });
    await page.reload();
    await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 30000 });
    check(await page.evaluate(() => window.tlview.runs[0].label.startsWith('group 2:')), 'a reload shows group 2 again');
    await page.click('#job-back');
    await page.waitForFunction(() => window.tlviewJob && window.tlviewJob.ready, null, { timeout: 20000 });
    check(/#group=2$/.test(page.url()) && await page.$('.jcell.last[data-group="2"]') !== null, `back at the overview (${page.url()}), group 2 marked`);
    const open = await page.textContent('.jcell[data-group="2"] .jstate');
    check(open === 'timeline open', `group 2's cell says: ${open}`);
    check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
    check(external.length === 0, `nothing fetched from elsewhere (${external.join(' ')})`);
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log(`${state.failures} failed`);
  process.exit(state.failures ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
