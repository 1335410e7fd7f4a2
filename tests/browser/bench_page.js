// bench_page.js: the page's interactions at 4M kernels (bench/bench_serve.md, "The page"), in
// headless Chromium: serve_fixture serves a generated run (16 processes time-sliced, a
// cudaLaunchKernel per kernel, copies, NVTX ranges), the page is loaded at 1600x1000, and each
// interaction is driven as a user would: 120 ctrl+wheel notches (60 in at the pointer, 60 out),
// 60 shift+wheel pans, 200 pointer moves over the rows (tooltips), 20 W/S key zooms. For each: the
// time draw() takes (mean, p95, max, from a wrapper around the page's own draw), the frames'
// intervals (requestAnimationFrame, p95) and the viewport queries' round trips (the page's
// lastQueryMs of each answer); then the median time of a frame at four fixed views (the whole
// run, 2 s, 20 ms, 2 ms), which is steadier on a loaded machine. Not a test: it prints one line per interaction. It uses only what
// every version of the page has (window.tlview: seq, data, lastQueryMs, draw()), so that the page
// before and after a change can be measured alike.
// Usage: node bench_page.js [KERNELS] (env: TLVIEW_BROWSER_DIR, TLVIEW_FIXTURE = serve_fixture,
//   CHROMIUM)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const { chromium, FLAGS, start } = require('./harness');
const KERNELS = process.argv[2] || '4000000';

// stats is "mean / p95 / max" of a list of ms.
function stats(xs) {
  if (!xs.length) return '–';
  const s = [...xs].sort((a, b) => a - b);
  const p95 = s[Math.min(s.length - 1, Math.floor(s.length * 0.95))];
  return `${(s.reduce((a, b) => a + b, 0) / s.length).toFixed(1)} / ${p95.toFixed(1)} / ${s[s.length - 1].toFixed(1)}`;
}

// measure runs `act` and returns the draw() times, frame intervals and query times it caused.
async function measure(page, act) {
  await page.evaluate(() => { window.__bench = { draws: [], frames: [], queries: [], seq: window.tlview.seq, last: performance.now(), on: true };
    const tick = (t) => { const b = window.__bench; if (!b.on) return; b.frames.push(t - b.last); b.last = t; requestAnimationFrame(tick); };
    requestAnimationFrame(tick); });
  await act();
  await page.waitForTimeout(400); // the last query's answer drawn
  return page.evaluate(() => { const b = window.__bench; b.on = false; return { draws: b.draws, frames: b.frames.slice(1), queries: b.queries }; });
}

async function main() {
  const server = await start(['--kernels', KERNELS, '--procs', '16'], 'serve_fixture');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM, headless: true, args: FLAGS,
    viewport: { width: 1600, height: 1000 }, deviceScaleFactor: 1,
  });
  const page = browser.pages()[0] || await browser.newPage();
  try {
    const t0 = Date.now();
    await page.goto(server.open);
    await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 120000, polling: 10 });
    const first = Date.now() - t0;
    await page.waitForTimeout(3000); // the concurrency grids and statistics built
    // wrap the page's draw() (a global function: requestDraw calls it through the global scope)
    await page.evaluate(() => {
      const orig = window.draw;
      window.draw = function benchDraw() { const t = performance.now(); orig(); if (window.__bench) window.__bench.draws.push(performance.now() - t); };
      let seq = window.tlview.seq;
      setInterval(() => { // each new answer: its round trip
        if (window.__bench && window.tlview.seq !== seq && window.tlview.lastQueryMs) { seq = window.tlview.seq; window.__bench.queries.push(window.tlview.lastQueryMs); }
      }, 5);
    });
    const box = await page.locator('#timeline').boundingBox();
    const out = [];
    const report = (what, r) => out.push(`${what}: draw ${stats(r.draws)} ms (${r.draws.length} draws), frames p95 ${stats(r.frames).split(' / ')[1]} ms, queries ${stats(r.queries)} ms (${r.queries.length})`);
    await page.mouse.move(box.x + 900, box.y + 150);
    report('120 ctrl+wheel notches', await measure(page, async () => {
      await page.keyboard.down('Control');
      for (let i = 0; i < 120; i++) { await page.mouse.wheel(0, i < 60 ? -100 : 100); await page.waitForTimeout(17); }
      await page.keyboard.up('Control');
    }));
    report('60 shift+wheel pans', await measure(page, async () => {
      await page.keyboard.down('Shift');
      for (let i = 0; i < 60; i++) { await page.mouse.wheel(0, i < 30 ? 120 : -120); await page.waitForTimeout(17); }
      await page.keyboard.up('Shift');
    }));
    report('200 pointer moves (tooltips)', await measure(page, async () => {
      for (let i = 0; i < 200; i++) { await page.mouse.move(box.x + 300 + i * 6, box.y + 120 + (i % 40) * 8); await page.waitForTimeout(8); }
    }));
    report('20 W/S key zooms', await measure(page, async () => {
      await page.mouse.move(box.x + 900, box.y + 150);
      for (let i = 0; i < 20; i++) { await page.keyboard.press(i < 10 ? 'w' : 's'); await page.waitForTimeout(60); }
    }));
    // a frame at fixed views, the data there: the median of 30 draw() (no query, no pointer)
    await page.mouse.move(box.x + 900, 5);
    const fixed = [];
    for (const [name, a, b] of [['whole run', null, null], ['2 s', 1e9, 3e9], ['20 ms', 1e9, 1.02e9], ['2 ms', 1e9, 1.002e9]]) {
      const seq = await page.evaluate(() => window.tlview.seq);
      await page.evaluate(([a, b]) => { if (a == null) fitAll(); else setView(a, b); }, [a, b]);
      await page.waitForFunction((s) => window.tlview.seq > s && window.tlview.data[0].t0 === Math.floor(window.tlview.t0), seq, { timeout: 30000, polling: 10 });
      await page.waitForTimeout(300);
      fixed.push(`${name} ${await page.evaluate(() => { const ts = []; for (let i = 0; i < 30; i++) { const t = performance.now(); draw(); ts.push(performance.now() - t); } ts.sort((x, y) => x - y); return ts[15].toFixed(1); })} ms`);
    }
    out.push(`a frame at fixed views (median draw): ${fixed.join(', ')}`);
    const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`bench_page: ${KERNELS} kernels, 16 processes; first timeline drawn ${first} ms after navigation; load average ${load}`);
    for (const l of out) console.log(`  ${l}`);
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(`bench_page: ${e.stack || e}`); process.exit(1); });
