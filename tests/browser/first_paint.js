// first_paint.js: how soon the page of `tlview serve FILE` shows something, in headless Chromium,
// timed from the start of the server's process (bench/bench_serve.md, issue 32). Not a test: it
// prints one line per open and a table. Chromium is started once, before any server (a user's
// browser is already open); then, for each way to open FILE, in turns, ROUNDS times:
//   `TLVIEW serve --port 0 [--no-cache] FILE` is started, and the URL it prints (with its token)
//   is opened in a fresh browser context the moment it is printed. The page records (Date.now(),
//   the same clock as this script's) the first frame in which it shows
//     - progress: the loading box (#loading, loading.js) shown with the server's stage;
//     - timeline: window.tlview.ready, set by main.js once the first viewport is drawn (the
//       frame after it is the one sampled);
//   the first screen is whichever comes first. The page's first contentful paint (its header,
//   before either) is printed too.
// Ways (--ways, in this order each round):
//   old      OLD serve --port 0 FILE          (another build, e.g. the one before a change; --old)
//   nocache  TLVIEW serve --port 0 --no-cache FILE
//   cold     the cache folder beside FILE (.tlview-cache) removed first; the server is stopped
//            only once it has written its cache (an *.index file appears there, as bench_serve
//            --reopen waits), so that the next warm open finds it
//   warm     TLVIEW serve --port 0 FILE       (the cache written by the cold open before it)
//   oldwarm  OLD serve --port 0 OLDFILE       (--old-file: a copy of FILE in a folder of its own,
//            whose cache the old build wrote before: the two builds' caches do not replace each
//            other's, as they would beside one FILE; the old build must have the cache)
// --requests: for each open, also the page's requests up to the timeline (path, from when to when,
//   ms from the server's start; the performance API's resource entries) and the loading stages it
//   showed: where the time between the server's first answer and the drawn timeline goes; and what
//   the server wrote to stderr by then (e.g. under TLVIEW_CACHE=verbose, what the cache cost).
// Usage: node first_paint.js TLVIEW FILE [--rounds N] [--ways old,nocache,cold,warm] [--old OLD]
//   [--old-file OLDFILE] [--requests]
//   env: TLVIEW_BROWSER_DIR (absolute: the folder with node_modules/playwright-core, the build's
//   tests/browser once browser__npm_install ran), CHROMIUM (default /usr/bin/chromium).
//   Put FILE in a folder of its own: its cache lands beside it and the cold way deletes it.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

process.env.CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const { chromium, FLAGS } = require('./harness');

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); if (i < 0) return dflt; const v = args[i + 1]; args.splice(i, 2); return v; };
const ROUNDS = Number(opt('--rounds', '3'));
const OLD = opt('--old', null);
const OLD_FILE = opt('--old-file', null);
const WAYS = opt('--ways', OLD ? 'old,nocache,cold,warm' : 'nocache,cold,warm').split(',');
const REQUESTS = args.includes('--requests') && args.splice(args.indexOf('--requests'), 1);
const [TLVIEW, FILE] = args;
if (WAYS.includes('oldwarm') && !(OLD && OLD_FILE)) { console.error('first_paint: the way oldwarm needs --old and --old-file'); process.exit(2); }
if (!TLVIEW || !FILE) { console.error('usage: node first_paint.js TLVIEW FILE [--rounds N] [--ways old,nocache,cold,warm] [--old OLD]'); process.exit(2); }
const CDIR = path.join(path.dirname(path.resolve(FILE)), '.tlview-cache');
const TIMEOUT = 180000;

const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
const secs = (ms) => (ms == null ? '–' : (ms / 1000).toFixed(2));
const cacheWritten = () => { try { return fs.readdirSync(CDIR).some((n) => n[0] !== '.' && n.includes('.index')); } catch { return false; } };
const cacheMiB = () => { try { return fs.readdirSync(CDIR).reduce((s, n) => s + fs.statSync(path.join(CDIR, n)).size, 0) / 1048576; } catch { return 0; } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// the page's own marks: the first frame showing the loading box, the first after the timeline is drawn
function pageMarks() {
  const fp = (window.__fp = {});
  const mark = (k) => { if (!(k in fp)) fp[k] = Date.now(); };
  const look = () => {
    const box = document.getElementById('loading');
    if (box && !box.hidden && box.textContent) mark('progress');
    if (window.tlview && window.tlview.ready) { mark('timeline'); return; }
    if (document.body && document.body.textContent.includes('Cannot read')) fp.error = document.body.textContent.slice(0, 200);
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
  new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.name === 'first-contentful-paint') fp.fcp = Math.round(performance.timeOrigin + e.startTime); })
    .observe({ type: 'paint', buffered: true });
}

// openOnce starts the server one way and returns the times (ms from its start) the page showed what.
async function openOnce(browser, way) {
  if (way === 'cold') fs.rmSync(CDIR, { recursive: true, force: true });
  const bin = way === 'old' || way === 'oldwarm' ? OLD : TLVIEW;
  const argv = ['serve', '--port', '0', ...(way === 'nocache' ? ['--no-cache'] : []), way === 'oldwarm' ? OLD_FILE : FILE];
  const ctx = await browser.newContext({ viewport: { width: 1600, height: 1000 }, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  await page.addInitScript(pageMarks);
  const la = load();
  const t0 = Date.now();
  const proc = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (b) => { err += b; });
  const exited = new Promise((r) => proc.on('exit', r));
  try {
    const open = await new Promise((resolve, reject) => {
      let out = '';
      proc.stdout.on('data', (b) => {
        out += b;
        const m = /(http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)\s/.exec(out);
        if (m) resolve(m[1]);
      });
      proc.on('exit', (c) => reject(new Error(`${bin} exited with ${c}: ${err}`)));
      setTimeout(() => reject(new Error(`${bin} printed no URL`)), 60000);
    });
    const url = Date.now() - t0;
    await page.goto(open);
    await page.waitForFunction(() => window.__fp.timeline || window.__fp.error, null, { timeout: TIMEOUT, polling: 50 });
    const fp = await page.evaluate(() => window.__fp);
    if (fp.error) throw new Error(fp.error);
    const r = { way, la, url, fcp: fp.fcp && fp.fcp - t0, progress: fp.progress && fp.progress - t0, timeline: fp.timeline - t0 };
    if (REQUESTS)
      r.requests = await page.evaluate((t0) => performance.getEntriesByType('resource').filter((e) => e.startTime + performance.timeOrigin <= window.__fp.timeline)
        .map((e) => `${new URL(e.name).pathname.replace(/^\//, '')} ${Math.round(performance.timeOrigin + e.startTime - t0)}-${Math.round(performance.timeOrigin + e.responseEnd - t0)}`).join(', ') +
        `; stages shown: ${typeof loadingSeen === 'undefined' ? '?' : loadingSeen.join(' > ') || 'none'}`, t0) +
        (err.trim() ? `\n    server's stderr: ${err.trim().split('\n').join('\n      ')}` : '');
    r.first = Math.min(r.timeline, r.progress || Infinity);
    if (way === 'cold') { // stopped once its cache is written (for the warm open after it)
      while (!cacheWritten() && Date.now() - t0 < TIMEOUT) await sleep(20);
      r.written = Date.now() - t0;
    }
    return r;
  } finally {
    await ctx.close();
    proc.kill('SIGTERM');
    await exited;
  }
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true, args: FLAGS });
  const all = [];
  console.log(`first_paint: ${TLVIEW} serve --port 0 ${FILE}${OLD ? ` (old: ${OLD})` : ''}, ${ROUNDS} rounds of ${WAYS.join(', ')}, ${new Date().toISOString()}, load average ${load()}, ${require('os').cpus().length} cores`);
  try {
    for (let round = 1; round <= ROUNDS; round++)
      for (const way of WAYS) {
        const r = await openOnce(browser, way);
        r.round = round;
        all.push(r);
        console.log(`  round ${round}, ${way.padEnd(7)}: URL ${secs(r.url)} s, page's first paint ${secs(r.fcp)} s, progress ${secs(r.progress)} s, timeline ${secs(r.timeline)} s` +
          `${r.written ? `, cache written ${secs(r.written)} s (${cacheMiB().toFixed(0)} MiB)` : ''}  (load ${r.la} at the start)`);
        if (r.requests) console.log(`    requests (ms from the start): ${r.requests}`);
      }
  } finally {
    await browser.close();
  }
  console.log(`\n| round | way | first screen | of it: progress | timeline drawn | load at start |\n| --- | --- | --- | --- | --- | --- |`);
  for (const r of all) console.log(`| ${r.round} | ${r.way} | ${secs(r.first)} s | ${r.progress ? `${secs(r.progress)} s` : 'none (timeline first)'} | ${secs(r.timeline)} s | ${r.la} |`);
  console.log(`finished ${new Date().toISOString()}, load average ${load()}`);
}

main().catch((e) => { console.error(`first_paint: ${e.stack || e}`); process.exit(1); });
