// test_page.js: the page of `tlview serve` in headless Chromium (playwright-core). Starts
// serve_fixture (generated runs), loads the page and checks: no console errors, the timeline is
// drawn (canvas pixels of the expected process and verdict colours), the process palette, the
// Perfetto conventions (plain wheel scrolls, ctrl+wheel zooms at the pointer, WASD, drag selects
// a range, shift+drag pans, F fits, Esc clears, ? helps), the range statistics against
// /api/range, the stretch hatched on kernels, the parallelism in the lane, ruler labels, hover
// tooltip text (and its clearing), click details, the bottom panel at 800 px, find, the view in
// the URL, the comparison view, and the rows of copies, API calls and NVTX ranges (drawn,
// nested, collapsed by a click on the process label, the flow arrow from an API call to its
// kernel on select, the selected API call or copy kept in the URL), that every viewport query asks for the compact answer (format=bin), and
// `tlview serve --follow` (follow: the page takes in what writer processes append, without a
// reload). Screenshots go to TLVIEW_BROWSER_DIR. Usage:
// node test_page.js page|compare|demo|follow|bench
//   (env: TLVIEW_BROWSER_DIR, TLVIEW_FIXTURE, CHROMIUM; follow: TLVIEW_GROW, the grow_trace tool)
// `bench` is not a test: it serves 10M generated kernels and prints the browser-side time to the
// first drawn timeline and to a redrawn zoom.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const { DIR, chromium, FLAGS, state, check, start, checkToken } = require('./harness');
const CASE = process.argv[2] || 'page';
// TLVIEW_BROWSER_ONLY=search,area,...: the page case runs only these parts, each on its own (one
// that throws counts as failed and the next runs): to look at one, or at what an older page does
const ONLY = (process.env.TLVIEW_BROWSER_ONLY || '').split(',').filter(Boolean);
const startFixture = (args) => start(args, 'serve_fixture');

// colourCounts counts canvas pixels (device pixels) near each of the given colours, in rows
// [y0, y1) of CSS px, right of the label gutter (or in columns [xa, xb) of CSS px), of the
// timeline's canvas or another (id: 'pinned', where a GPU's tracks are pinned by default).
async function colourCounts(page, colours, y0, y1, xa, xb, id = 'timeline') {
  return page.evaluate(([colours, y0, y1, xa, xb, id]) => {
    const c = document.getElementById(id);
    const dpr = window.devicePixelRatio || 1;
    const x0 = Math.round((xa == null ? 230 : xa) * dpr), x1 = xb == null ? c.width : Math.round(xb * dpr);
    const img = c.getContext('2d').getImageData(x0, Math.round(y0 * dpr), Math.max(1, x1 - x0), Math.max(1, Math.round((y1 - y0) * dpr))).data;
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
  }, [colours, y0, y1, xa, xb, id]);
}

// view reads the visible range [t0, t1] (ns).
function view(page) {
  return page.evaluate(() => [window.tlview.t0, window.tlview.t1]);
}

// xOf maps a time (ns) to the page x of the timeline canvas at the current view.
function xOf(page, box, t) {
  return page.evaluate(([t, left]) => left + 230 + (t - window.tlview.t0) * (document.getElementById('timeline').clientWidth - 230) / (window.tlview.t1 - window.tlview.t0), [t, box.x]);
}

async function waitData(page, seqAfter) {
  await page.waitForFunction((s) => window.tlview.seq > s && window.tlview.data.length > 0 &&
    window.tlview.data[0].t0 === Math.floor(window.tlview.t0), seqAfter, { timeout: 15000 });
  await page.waitForTimeout(100);
}

// startGrow starts grow_trace writing `file` as process `pid`; say(cmd) sends it one command
// ("N" kernels, "c" a captured range) and waits for its "ok", end() closes its file.
function startGrow(file, pid) {
  const p = spawn(process.env.TLVIEW_GROW, [file, String(pid)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '', waiting = null;
  p.stdout.on('data', (b) => {
    out += b;
    if (waiting && out.includes('ok\n')) { out = out.replace('ok\n', ''); const w = waiting; waiting = null; w(); }
  });
  return {
    proc: p,
    say: (cmd) => new Promise((resolve, reject) => {
      waiting = resolve;
      setTimeout(() => reject(new Error(`grow_trace did not answer '${cmd}'`)), 10000);
      p.stdin.write(`${cmd}\n`);
    }),
    end: () => new Promise((resolve) => { p.on('exit', resolve); p.stdin.end('q\n'); }),
  };
}

async function main() {
  const args = { compare: ['--compare'], bench: ['--kernels', '10000000', '--procs', '16'], demo: ['serve', '--port', '0'] };
  let followDir = null, grow = null;
  if (CASE === 'follow') { // a folder with one file being written, before the server starts
    followDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-follow-'));
    grow = startGrow(path.join(followDir, 'w1.db'), 101);
    await grow.say('40');
    args.follow = ['serve', '--follow', '--port', '0', followDir];
  }
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
  const statsPending = (m) => /status of 503/.test(m.text()) && /\/api\/stats\?run=\d+(&gen=\d+)?$/.test(m.location().url || '');
  // following growing files, a query that names an older generation is answered 409: expected,
  // the page reads the runs again
  const stale = (m) => CASE === 'follow' && /status of 409/.test(m.text());
  page.on('console', (m) => { if (m.type() === 'error' && !statsPending(m) && !stale(m)) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  // a stale viewport query aborted by the page is expected; any other failure is not
  page.on('requestfailed', (r) => { if (!/ABORTED/.test(r.failure().errorText)) errors.push(`request failed: ${r.url()} ${r.failure().errorText}`); });
  const external = [], timelineAsked = [];
  page.on('request', (r) => { if (!r.url().startsWith(fixture.url)) external.push(r.url()); });
  page.on('request', (r) => { if (/\/api\/timeline\?/.test(r.url())) timelineAsked.push(r.url()); });
  try {
    if (CASE === 'bench') {
      await benchPage(page, fixture.open);
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
    await page.goto(fixture.open);
    await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 20000 });
    await page.waitForSelector('.card table', { timeout: 20000 });
    await checkToken(page, fixture, 'api/runs');
    // these cases look at the processes' colours: where the runs overlap the page starts by verdict
    // (test_facts.js loading checks that), so colour by process first, as a user would
    await page.selectOption('#colorby', 'process');
    if (CASE === 'page') {
      check(statsAsked.length === 2 && statsAsked[1] - statsAsked[0] >= 900, `stats asked again ${statsAsked.length > 1 ? statsAsked[1] - statsAsked[0] : '-'} ms after a 503 with Retry-After: 1`);
      check(await page.locator('#error').isHidden(), 'no error shown for the pending statistics');
    }
    await page.waitForTimeout(300);
    const S = await page.evaluate(() => ({ runs: window.tlview.runs.length, bands: window.tlview.bands, pinBands: window.tlview.pinBands, t0: window.tlview.t0, t1: window.tlview.t1, kinds: window.tlview.runs.map((r) => r.rows.map((x) => x.kind)) }));
    // kernel rows (the copies, API and NVTX rows of each process are checked by testTracks)
    const rows = S.bands.filter((b) => b.type === 'row' && S.kinds[b.run][b.row] === 'kernels');
    if (CASE === 'page' && ONLY.length) await runOnly(page, S, rows);
    else if (CASE === 'page') {
      await testPage(page, S, rows);
      await testTracks(page, S);
    }
    else if (CASE === 'demo') await testDemo(page, S, rows);
    else if (CASE === 'follow') await testFollow(page, grow, followDir);
    else await testCompare(page, S, rows);
    // the page asks for the compact viewport answer and reads its typed arrays in place
    const compact = timelineAsked.filter((u) => /[?&]format=bin(&|$)/.test(u));
    check(timelineAsked.length > 0 && compact.length === timelineAsked.length, `every viewport query asks for format=bin (${compact.length} of ${timelineAsked.length})`);
    const typed = await page.evaluate(() => window.tlview.data.every((d) => [...d.rows.values()].every((R) => ArrayBuffer.isView(R.mode === 'bins' ? (R.count || R.levels[0].count) : R.s))));
    check(typed, 'the rows\' arrays are typed arrays');
    if (CASE === 'page') { // after the count above: these queries ask for JSON too
      // the page's decoder (decodeCompact) gives the JSON answer's values for views at every zoom,
      // every row: arrays sent as steps (delta) and names through the answer's table of strings
      const decoded = await page.evaluate(async ([t0, t1]) => {
        const same = (a, b) => {
          if (a === null || typeof a === 'number') return (a === null && (b === null || Number.isNaN(b))) || a === b;
          if (typeof a !== 'object') return a === b;
          if (Array.isArray(a)) return b != null && a.length === b.length && a.every((x, i) => same(x, b[i]));
          const k = Object.keys(a);
          return b != null && k.length === Object.keys(b).length && k.every((x) => same(a[x], b[x]));
        };
        const bad = [];
        let steps = 0, tables = 0;
        for (let k = 0; k < 18; k++) {
          const w = Math.max(1, Math.floor((t1 - t0) / 10 ** (k % 6))), a = t0 + Math.floor(((t1 - t0) - w) * ((k * 7919) % 101) / 100);
          const q = `api/timeline?run=0&t0=${a}&t1=${a + w}&width=${[1600, 97, 5][k % 3]}&kmax=${[1600, 20, 0][k % 3]}`;
          const rj = await fetch(q), rb = await fetch(`${q}&format=bin`);
          if (!rj.ok || !rb.ok) { bad.push(`${q}: ${rj.status} ${await rj.text()}`); continue; }
          const j = await rj.json(), buf = await rb.arrayBuffer();
          const head = new TextDecoder().decode(new Uint8Array(buf, new DataView(buf).getUint32(4, true)));
          steps += head.split('"delta":1').length - 1;
          tables += head.split('"strings":1').length - 1;
          if (!same(j, decodeCompact(buf))) bad.push(q);
        }
        return { bad, steps, tables };
      }, [Math.floor(S.t0), Math.ceil(S.t1)]);
      // escaped steps (starts beyond 32 bits of t0, which the fixture's run does not reach): a
      // hand-made answer, i32 steps [0, 5, escaped, -7] from 100, the escaped one 1e10 in f64
      const esc = await page.evaluate(() => {
        const head = new TextEncoder().encode(JSON.stringify({ v: { '@': 'i32', o: 0, n: 4, delta: 1, base: 100, esc: { '@': 'f64', o: 16, n: 1 } } }));
        const buf = new ArrayBuffer(8 + 24 + head.length), dv = new DataView(buf);
        new Uint8Array(buf).set([84, 76, 86, 66]); // TLVB
        dv.setUint32(4, 32, true);
        [0, 5, -2147483648, -7].forEach((x, i) => dv.setInt32(8 + 4 * i, x, true));
        dv.setFloat64(24, 1e10, true);
        new Uint8Array(buf, 32).set(head);
        return Array.from(decodeCompact(buf).v);
      });
      check(esc.join() === [100, 105, 10000000105, 10000000098].join(), `escaped steps decoded (${esc.join()})`);
      check(decoded.bad.length === 0 && decoded.steps > 0 && decoded.tables > 0,
        `the compact answer decodes to the JSON answer (${decoded.steps} arrays of steps, ${decoded.tables} of names; differing: ${decoded.bad.join(' ')})`);
    }
    check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
    check(external.length === 0, `nothing fetched from elsewhere (${external.join(' ')})`);
  } finally {
    await browser.close();
    fixture.proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
    if (grow) grow.proc.kill('SIGTERM');
    if (followDir) fs.rmSync(followDir, { recursive: true, force: true });
  }
  console.log(`${state.failures === 0 ? 'PASS' : 'FAIL'}: browser ${CASE}, ${state.failures} failed checks`);
  process.exit(state.failures ? 1 : 0);
}

// runOnly runs the parts of the page case that ONLY names, each on its own.
async function runOnly(page, S, rows) {
  const box = await page.locator('#timeline').boundingBox();
  const parts = {
    palette: () => testPalette(page), range: () => testRange(page, box, rows), area: () => testArea(page),
    pinned: () => testPinned(page), kernel: () => testKernel(page, box, rows), search: () => testSearch(page),
    keys: () => testZoomKeys(page, box, rows, box.x + 230 + (box.width - 230) * 0.3),
    panel: () => testPanel800(page, S), tracks: () => testTracks(page, S),
  };
  for (const name of ONLY) {
    try {
      await page.evaluate(() => window.scrollTo(0, 0));
      await parts[name]();
    } catch (e) {
      check(false, `${name}: ${String(e.message || e).split('\n')[0]}`);
    }
  }
}

async function testPage(page, S, rows) {
  check(S.runs === 1, 'one run');
  check(rows.length === 8, `8 stream rows (4 processes x 2 streams), got ${rows.length}`);
  await testPalette(page);
  // drawn: every process colour appears in the rows, time-sliced red in the verdict strip
  const procColours = await page.evaluate(() => [0, 1, 2, 3].map((p) => processColor(null, p)));
  const y0 = rows[0].y, y1 = rows[rows.length - 1].y + rows[rows.length - 1].h;
  const c = await colourCounts(page, procColours, y0, y1);
  procColours.forEach((col, i) => check(c.counts[i] > 200, `process colour ${col} drawn (${c.counts[i]} px)`));
  const strip = S.pinBands.find((b) => b.type === 'vband');
  const v = await colourCounts(page, ['#d64541'], strip.y, strip.y + strip.h, null, null, 'pinned');
  check(v.counts[0] > 300, `time-sliced windows drawn in the verdict strip (${v.counts[0]} px)`);
  const conc = S.pinBands.find((b) => b.type === 'conc');
  const cc = await colourCounts(page, ['#2f5fa8'], conc.y, conc.y + conc.h, null, null, 'pinned');
  check(cc.counts[0] > 100, `concurrency peak line drawn (${cc.counts[0]} px)`);
  await page.screenshot({ path: path.join(DIR, 'page.png'), fullPage: true });
  const box = await page.locator('#timeline').boundingBox();

  // a plain wheel scrolls the page and leaves the view alone
  const v0 = await view(page);
  await page.mouse.move(box.x + 700, box.y + rows[0].y + 5);
  await page.waitForTimeout(150);
  const tipBefore = await page.evaluate(() => !document.getElementById('tooltip').hidden);
  await page.mouse.wheel(0, 200);
  await page.waitForTimeout(300);
  const scrolled = await page.evaluate(() => window.scrollY);
  const v1 = await view(page);
  check(scrolled > 50 && v1[0] === v0[0] && v1[1] === v0[1], `plain wheel scrolls the page (scrollY ${scrolled}) and keeps the view`);
  check(tipBefore && await page.evaluate(() => document.getElementById('tooltip').hidden), 'the tooltip is cleared when the page scrolls');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(100);

  // ctrl+wheel zooms in at the pointer: the time under it stays there
  const px = box.x + 230 + (box.width - 230) * 0.3;
  const tAt = (x) => page.evaluate(([x, left]) => window.tlview.t0 + (x - left - 230) * (window.tlview.t1 - window.tlview.t0) / (document.getElementById('timeline').clientWidth - 230), [x, box.x]);
  const before = v0[1] - v0[0], tBefore = await tAt(px);
  let seq = await page.evaluate(() => window.tlview.seq);
  await page.mouse.move(px, box.y + rows[0].y + 5);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -300);
  await page.keyboard.up('Control');
  await waitData(page, seq);
  const v2 = await view(page), after = v2[1] - v2[0], tAfter = await tAt(px);
  check(after < before * 0.7 && after > before * 0.45, `ctrl+wheel zooms in: span ${before.toFixed(0)} -> ${after.toFixed(0)} ns`);
  check(Math.abs(tAfter - tBefore) < after / (box.width - 230), `ctrl+wheel zooms at the pointer (time under it ${tBefore.toFixed(0)} -> ${tAfter.toFixed(0)} ns)`);
  // keys: '-' and S zoom out, W in, D pans; a tooltip does not outlive the view it described
  seq = await page.evaluate(() => window.tlview.seq);
  await page.keyboard.press('-');
  await waitData(page, seq);
  const afterKey = await page.evaluate(() => window.tlview.t1 - window.tlview.t0);
  check(Math.abs(afterKey / after - 1 / 0.6) < 0.01, `key '-' zooms out by 1/0.6 (${after.toFixed(0)} -> ${afterKey.toFixed(0)})`);
  await testZoomKeys(page, box, rows, px);
  {
    const a = await view(page);
    await page.keyboard.press('d');
    const b = await view(page);
    check(Math.abs((b[0] - a[0]) / (a[1] - a[0]) - 0.2) < 0.01, `key D pans right by a fifth (${((b[0] - a[0]) / (a[1] - a[0])).toFixed(3)})`);
    await page.keyboard.press('a');
  }
  check(/t0=-?\d+&t1=\d+/.test(await page.evaluate(() => location.hash)), 'view state in the URL hash');
  await page.mouse.move(box.x + 700, box.y + rows[0].y + 8);
  await page.waitForTimeout(150);
  const tipShown = await page.evaluate(() => !document.getElementById('tooltip').hidden);
  await page.keyboard.press('w');
  const tipAfter = await page.evaluate(() => !document.getElementById('tooltip').hidden);
  check(tipShown && !tipAfter, `the tooltip is cleared when the keyboard zooms (shown before: ${tipShown}, after: ${tipAfter})`);
  await page.keyboard.press('s');

  // shift+drag pans: 200 px to the right shows earlier times by 200 px worth
  seq = await page.evaluate(() => window.tlview.seq);
  await page.evaluate(() => { location.hash = '#t0=300000000&t1=600000000'; });
  await waitData(page, seq);
  const p0 = await view(page);
  const cy = box.y + rows[2].y + 5;
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + 600, cy);
  await page.mouse.down();
  await page.mouse.move(box.x + 700, cy, { steps: 4 });
  await page.mouse.move(box.x + 800, cy, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const p1 = await view(page);
  const perPx = (p0[1] - p0[0]) / (box.width - 230);
  check(Math.abs((p0[0] - p1[0]) / perPx - 200) < 2 && Math.abs((p1[1] - p1[0]) - (p0[1] - p0[0])) < 1, `shift+drag pans by 200 px (${((p0[0] - p1[0]) / perPx).toFixed(1)} px)`);
  check(await page.evaluate(() => window.tlview.range === null), 'shift+drag selects nothing');
  await testRange(page, box, rows);
  await testArea(page);
  await testPinned(page);
  await testRuler(page);
  await testKernel(page, box, rows);
  await testHelp(page);
  await testPanel800(page, S);
}

// testZoomKeys: W/S zoom at the pointer (issue 31), as ctrl+wheel does (the time under it stays
// there), and about the centre once it left the timeline.
async function testZoomKeys(page, box, rows, px) {
  await page.mouse.move(px, box.y + rows[0].y + 5);
  const tAt = (x) => page.evaluate(([x, left]) => window.tlview.t0 + (x - left - 230) * (window.tlview.t1 - window.tlview.t0) / (document.getElementById('timeline').clientWidth - 230), [x, box.x]);
  for (const [key, f] of [['w', 0.6], ['s', 1 / 0.6]]) {
    const a = await view(page), ta = await tAt(px);
    await page.keyboard.press(key);
    const b = await view(page), tb = await tAt(px);
    check(Math.abs((b[1] - b[0]) / (a[1] - a[0]) - f) < 0.01 && Math.abs(tb - ta) < (b[1] - b[0]) / (box.width - 230), `key ${key.toUpperCase()} zooms by ${f.toFixed(3)} at the pointer (time under it ${ta.toFixed(0)} -> ${tb.toFixed(0)} ns)`);
  }
  await page.mouse.move(box.x + 700, 5); // off the timeline (the header)
  for (const [key, f] of [['w', 0.6], ['s', 1 / 0.6]]) {
    const a = await view(page);
    await page.keyboard.press(key);
    const b = await view(page);
    check(Math.abs((b[1] - b[0]) / (a[1] - a[0]) - f) < 0.01 && Math.abs((a[0] + a[1]) / 2 - (b[0] + b[1]) / 2) < 1, `the pointer off the timeline, key ${key.toUpperCase()} zooms by ${f.toFixed(3)} about the centre`);
  }
  await page.mouse.move(px, box.y + rows[0].y + 5);
}

// testPalette: process colours stay apart from each other past ten processes and from every
// verdict colour, and take none of the verdicts' hue families (red, orange, green, blue, purple).
async function testPalette(page) {
  const r = await page.evaluate(() => {
    const n = 16, cols = [];
    for (let p = 0; p < n; p++) cols.push(processColor(null, p));
    let pair = Infinity, verdict = Infinity;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < i; j++) pair = Math.min(pair, deltaE(cols[i], cols[j]));
      for (const v of Object.values(VERDICT_COLORS)) verdict = Math.min(verdict, deltaE(cols[i], v));
    }
    const hues = cols.map((c) => {
      const [r, g, b] = hexRgb(c).map((v) => v / 255), mx = Math.max(r, g, b), mn = Math.min(r, g, b), d = mx - mn;
      const h = mx === r ? ((g - b) / d) % 6 : mx === g ? (b - r) / d + 2 : (r - g) / d + 4;
      return Math.round((h * 60 + 360) % 360);
    });
    return { cols, pair, verdict, hues, again: processColor(null, 3) === cols[3] };
  });
  const banned = (h) => h < 40 || (h > 85 && h < 160) || (h > 190 && h < 275) || h > 340;
  // issue 31: told apart at 16 processes (the palette before it: 24.3, two pinks)
  check(r.pair > 28, `16 process colours pairwise ΔE > 28 (min ${r.pair.toFixed(1)}): ${r.cols.join(' ')}`);
  check(r.verdict > 24, `process colours ΔE > 24 from every verdict colour (min ${r.verdict.toFixed(1)})`);
  check(!r.hues.some(banned), `process hues outside the verdicts' families (${r.hues.join(' ')})`);
  check(r.again, 'a process keeps its colour');
}

// testRange: a drag on the pinned tracks selects a time range, shaded, with its duration on the
// ruler and its statistics in the bottom panel (the numbers of /api/range); F fits it, Esc
// clears it.
async function testRange(page, box, rows) {
  // a drag on the pinned tracks (the GPU's concurrency track) selects a time range, every row
  const pin = await page.locator('#pinned').boundingBox();
  const conc = (await page.evaluate(() => window.tlview.pinBands)).find((b) => b.type === 'conc');
  const cy = pin.y + conc.y + 20;
  const xa = box.x + 500, xb = box.x + 900;
  const want = await page.evaluate(([a, b]) => { const S = window.tlview, w = document.getElementById('timeline').clientWidth - 230; return [S.t0 + (a - 230) * (S.t1 - S.t0) / w, S.t0 + (b - 230) * (S.t1 - S.t0) / w]; }, [xa - box.x, xb - box.x]);
  await page.mouse.move(xa, cy);
  await page.mouse.down();
  await page.mouse.move(xa + 150, cy, { steps: 4 });
  await page.mouse.move(xb, cy, { steps: 4 });
  await page.mouse.up();
  const range = await page.evaluate(() => window.tlview.range);
  check(range && Math.abs(range.t0 - want[0]) < 1 && Math.abs(range.t1 - want[1]) < 1, `drag selects [${range && range.t0.toFixed(0)}, ${range && range.t1.toFixed(0)}] (want [${want[0].toFixed(0)}, ${want[1].toFixed(0)}])`);
  await page.waitForFunction(() => window.tlview.rangeStats && !document.getElementById('range-body').hidden, null, { timeout: 5000 });
  await page.waitForTimeout(150);
  // shaded: the grid's background inside the range is darker than outside
  const shade = await page.evaluate(([y, a, b]) => {
    const c = document.getElementById('timeline').getContext('2d');
    const lum = (x) => { const d = c.getImageData(x, y, 1, 1).data; return d[0] + d[1] + d[2]; };
    return [lum(a), lum(b)];
  }, [Math.round(rows[0].y - 3), Math.round((xa + xb) / 2 - box.x), Math.round(xb - box.x + 40)]);
  check(shade[0] < shade[1], `the range is shaded (background ${shade[0]} inside, ${shade[1]} outside)`);
  const dur = await page.evaluate(() => fmtTime(window.tlview.range.t1 - window.tlview.range.t0, 4));
  const text = await page.locator('#range-body').innerText();
  check(text.includes(`Range ${dur}`), `the panel shows the range's duration (${dur})`);
  const api = await page.evaluate(async () => {
    const r = window.tlview.range;
    return (await fetch(`api/range?run=0&t0=${Math.floor(r.t0)}&t1=${Math.ceil(r.t1)}`)).json();
  });
  const fmt = await page.evaluate((a) => ({
    procs: a.processes.map((p) => [`pid ${p.pid}`, p.kernels.toLocaleString(), fmtTime(p.ns), fmtX(p.stretch)]),
    names: a.names.slice(0, 3).map((n) => [shortName(n.name), n.kernels.toLocaleString(), fmtTime(n.ns), fmtX(n.stretch)]),
    verdicts: a.lanes[0].verdict_ns.map((ns, v) => [window.tlview.verdicts[v], ns ? fmtTime(ns) : null]).filter((x) => x[1]),
    par: a.lanes[0].parallelism == null ? '–' : a.lanes[0].parallelism.toFixed(2),
  }), api);
  const lines = text.split('\n').map((l) => l.replace(/\t/g, ' ').trim());
  const has = (cells) => lines.some((l) => cells.every((c) => l.includes(c)));
  check(api.processes.length === 4 && fmt.procs.every(has), `per process: count, time inside, stretch as /api/range (${fmt.procs.map((p) => p.join(' ')).join('; ')})`);
  check(fmt.names.length > 0 && fmt.names.every(has), `per kernel name: count, time inside, stretch (${fmt.names.map((p) => p.join(' ')).join('; ')})`);
  check(fmt.verdicts.length > 0 && fmt.verdicts.every(has), `time per verdict on the GPU (${fmt.verdicts.map((p) => p.join(' ')).join('; ')})`);
  check(has(['effective parallelism', fmt.par]), `effective parallelism of the range (${fmt.par})`);
  check(/ratio of sums/.test(text) && /view\/README\.md/.test(text), 'the panel says which stretch it shows');
  check(/range=-?\d+(,|%2C)\d+/.test(await page.evaluate(() => location.hash)), 'the range is in the URL hash');
  await page.screenshot({ path: path.join(DIR, 'range.png') });
  // F fits the view to the range, Esc clears it
  let seq = await page.evaluate(() => window.tlview.seq);
  await page.keyboard.press('f');
  await waitData(page, seq);
  const v = await view(page), len = range.t1 - range.t0;
  check(Math.abs(v[0] - (range.t0 - 0.025 * len)) < 2 && Math.abs(v[1] - (range.t1 + 0.025 * len)) < 2, `F fits the range (view ${v[0].toFixed(0)}–${v[1].toFixed(0)})`);
  await page.keyboard.press('Escape');
  const cleared = await page.evaluate(() => ({ range: window.tlview.range, panel: document.getElementById('details').hidden, hash: location.hash }));
  check(cleared.range === null && cleared.panel && !/range=/.test(cleared.hash), 'Esc clears the range and closes the panel');
}

// testArea: a drag across two rows selects an area (issue 31, item 6): the range over those rows
// only (shaded there, not elsewhere), whose statistics (GET /api/range with rows=) fill sortable
// tables by process, verdict and name, every name listed, each with its CSV; kept in the URL.
async function testArea(page) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.evaluate(() => { location.hash = '#t0=300000000&t1=600000000'; });
  await page.waitForTimeout(400);
  const bands = (await page.evaluate(() => window.tlview.bands)).filter((b) => b.type === 'row');
  const box = await page.locator('#timeline').boundingBox();
  const r0 = bands[0], r1 = bands[1], other = bands.find((b) => b.first && b !== r0);
  await page.mouse.move(box.x + 500, box.y + r0.y + 5);
  await page.mouse.down();
  await page.mouse.move(box.x + 700, box.y + r1.y + 5, { steps: 4 });
  await page.mouse.move(box.x + 900, box.y + r1.y + 5, { steps: 4 });
  await page.mouse.up();
  await page.waitForFunction(() => window.tlview.rangeStats && !document.getElementById('range-body').hidden, null, { timeout: 5000 });
  await page.waitForTimeout(200);
  const range = await page.evaluate(() => window.tlview.range);
  check(range.rows && range.rows.length === 2 && range.rows[0].row === r0.row && range.rows[1].row === r1.row, `a drag from one row to the next selects an area of those 2 rows (${JSON.stringify(range.rows)})`);
  check(new RegExp(`[#&]area=0(\\.|%2E)${r0.row}(,|%2C)0(\\.|%2E)${r1.row}(&|$)`).test(await page.evaluate(() => location.hash)), 'the area is in the URL');
  const lum = (y, x) => page.evaluate(([y, x]) => { const d = document.getElementById('timeline').getContext('2d').getImageData(x, y, 1, 1).data; return d[0] + d[1] + d[2] + (255 - d[3]) * 3; }, [y, x]);
  // the lightest pixel of a column's stretch of a row: its background
  const bg = async (b, x) => { let m = 0; for (let y = b.y + 1; y < b.y + b.h - 1; y++) m = Math.max(m, await lum(Math.round(y), Math.round(x))); return m; };
  const inSel = await bg(r0, 700), outSel = await bg(r0, 1000), inOther = await bg(other, 700), outOther = await bg(other, 1000);
  check(inSel < outSel && inOther === outOther, `shaded over its rows only (selected row ${inSel} inside, ${outSel} outside; another row ${inOther}, ${outOther})`);
  const api = await page.evaluate(async ([a, b, rows]) => (await fetch(`api/range?run=0&t0=${Math.floor(a)}&t1=${Math.ceil(b)}&rows=${rows}`)).json(), [range.t0, range.t1, `${r0.row},${r1.row}`]);
  const text = await page.locator('#range-body').innerText();
  check(text.includes(`over 2 rows`) && text.includes(`${api.kernels.toLocaleString()} kernels`), `the panel: the area's ${api.kernels} kernels over 2 rows`);
  check(api.processes.length === 1 && api.rows === 2, `the area's statistics are of its rows (${api.processes.length} process, rows ${api.rows})`);
  // every name, sortable
  const names = page.locator('#range-body .blk.wide .dtable').first();
  const nrows = await names.locator('tr').count();
  check(nrows - 1 === api.nnames && api.names.length === api.nnames, `every kernel name is listed (${nrows - 1} of ${api.nnames})`);
  const col = async (i) => names.locator(`tr td:nth-child(${i})`).allInnerTexts();
  const num = (t) => Number(t.replace(/[^0-9.]/g, ''));
  await names.locator('th', { hasText: 'kernels' }).click();
  const byCount = (await col(2)).map(num);
  check(byCount.every((v, i) => !i || byCount[i - 1] >= v), `a click on "kernels" sorts by count, most first (${byCount.join(' ')})`);
  await names.locator('th', { hasText: 'kernels' }).click();
  const up = (await col(2)).map(num);
  check(up.every((v, i) => !i || up[i - 1] <= v), `a second click, fewest first (${up.join(' ')})`);
  const verdicts = await page.locator('#range-body .dtable').nth(1).innerText();
  check(api.by_verdict.length > 0 && api.by_verdict.every((v) => verdicts.includes(window_verdict_name(v.verdict))), `kernels by verdict (${api.by_verdict.map((v) => `${window_verdict_name(v.verdict)} ${v.kernels}`).join(', ')})`);
  check(await page.locator('#range-body a.csv').count() >= 3, 'each table has its CSV');
  await page.screenshot({ path: path.join(DIR, 'area.png') });
  await page.keyboard.press('Escape');
}
const window_verdict_name = (v) => ['idle', 'solo', 'concurrent', 'time-sliced', 'contended', 'queued', 'unknown'][v];

// testPinned: a GPU's tracks (its header, concurrency track and verdict strip) are pinned on top
// (issue 31, item 5): after scrolling the processes' rows away they are still in sight under the
// ruler; unpinned and pinned again by a click; a row hidden (✕) and moved (▼) by the controls its
// label shows under the pointer, shown again from the legend; kept in the URL.
async function testPinned(page) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const pins = await page.evaluate(() => window.tlview.pinBands.map((b) => b.type));
  check(pins.join() === 'lane,conc,vband', `the GPU's tracks are pinned (${pins.join(', ')})`);
  // scroll the first rows away (not the whole timeline: the pinned tracks go with it)
  await page.evaluate(() => window.scrollTo(0, window.tlview.height - 150));
  await page.waitForTimeout(200);
  const at = await page.evaluate(() => {
    const p = document.getElementById('pinned').getBoundingClientRect(), r = document.getElementById('ruler').getBoundingClientRect();
    const strip = window.tlview.pinBands.find((b) => b.type === 'vband');
    const e = document.elementFromPoint(600, p.top + strip.y + strip.h / 2);
    return { top: p.top, ruler: r.bottom, hit: e && e.id, scrolled: window.scrollY, timelineTop: document.getElementById('timeline').getBoundingClientRect().top };
  });
  check(at.scrolled >= 300 && Math.abs(at.top - at.ruler) <= 1 && at.hit === 'pinned' && at.timelineTop < at.top, `scrolled ${at.scrolled} px: the pinned tracks stay under the ruler (top ${at.top}, ruler ${at.ruler}; at the strip: #${at.hit})`);
  const strip = (await page.evaluate(() => window.tlview.pinBands)).find((b) => b.type === 'vband');
  const red = await colourCounts(page, ['#d64541'], strip.y, strip.y + strip.h, null, null, 'pinned');
  check(red.counts[0] > 300, `the pinned verdict strip is drawn (${red.counts[0]} px)`);
  await page.screenshot({ path: path.join(DIR, 'pinned-scrolled.png') });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(100);
  // unpin, then pin again, by the control at the right of the GPU's label
  let pb = await page.locator('#pinned').boundingBox();
  await page.mouse.click(pb.x + 230 - 20, pb.y + 11);
  await page.waitForTimeout(200);
  const un = await page.evaluate(() => ({ h: window.tlview.pinHeight, lane: window.tlview.bands.some((b) => b.type === 'vband'), hash: location.hash }));
  check(un.h === 0 && un.lane && /[#&]unpin=0(\.|%2E)0/.test(un.hash), `a click on "unpin" puts the tracks back in the timeline (${JSON.stringify(un)})`);
  const tb = await page.locator('#timeline').boundingBox();
  const laneB = (await page.evaluate(() => window.tlview.bands)).find((b) => b.type === 'lane');
  await page.mouse.click(tb.x + 230 - 20, tb.y + laneB.y + 11);
  await page.waitForTimeout(200);
  check(await page.evaluate(() => window.tlview.pinHeight > 0), 'a click on "pin" pins them again');
  // hide a row, move another, by the controls of their labels
  const rows0 = (await page.evaluate(() => window.tlview.bands)).filter((b) => b.type === 'row');
  const box = await page.locator('#timeline').boundingBox();
  const victim = rows0[1];
  await page.mouse.move(box.x + 100, box.y + victim.y + 6);
  await page.mouse.move(box.x + 218, box.y + victim.y + 6);
  await page.waitForTimeout(150);
  const tip = await page.evaluate(() => document.getElementById('tooltip').innerText);
  check(/hide this row/.test(tip), `the row's ✕ says what it does (${tip})`);
  let seq = await page.evaluate(() => window.tlview.seq);
  await page.mouse.click(box.x + 218, box.y + victim.y + 6);
  await page.waitForFunction((s) => window.tlview.seq > s, seq, { timeout: 5000 });
  await page.waitForTimeout(200);
  const rows1 = await page.evaluate(() => window.tlview.bands.filter((b) => b.type === 'row').map((b) => b.row));
  const asked = await page.evaluate((r) => window.tlview.data[0].rows.has(r), victim.row);
  check(rows1.length === rows0.length - 1 && !rows1.includes(victim.row) && !asked, `✕ hides row ${victim.row} (${rows0.length} -> ${rows1.length} rows; not asked for: ${!asked})`);
  const first = rows0[0];
  const box2 = await page.locator('#timeline').boundingBox(); // the legend grew a line
  await page.mouse.move(box2.x + 100, box2.y + first.y + 6);
  await page.mouse.move(box2.x + 202, box2.y + first.y + 6);
  await page.mouse.click(box2.x + 202, box2.y + first.y + 6);
  await page.waitForTimeout(200);
  const rows2 = await page.evaluate(() => window.tlview.bands.filter((b) => b.type === 'row').map((b) => b.row));
  check(rows2[0] === rows1[1] && rows2[1] === first.row, `▼ moves row ${first.row} below row ${rows1[1]} (${rows2.slice(0, 4).join(' ')})`);
  const hash = await page.evaluate(() => location.hash);
  check(/[#&]hide=0(\.|%2E)/.test(hash) && /[#&]order=0/.test(hash), 'hidden and moved rows are in the URL');
  await page.reload();
  await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 20000 });
  const rows3 = await page.evaluate(() => window.tlview.bands.filter((b) => b.type === 'row').map((b) => b.row));
  check(JSON.stringify(rows3) === JSON.stringify(rows2), 'a reload keeps them');
  const legend = page.locator('#show-hidden');
  check(/1 row hidden/.test(await legend.innerText()), `the legend: ${await legend.innerText()}`);
  await legend.click();
  await page.waitForTimeout(200);
  check(await page.evaluate(() => window.tlview.bands.filter((b) => b.type === 'row').length) === rows0.length, 'the legend shows it again');
  await page.evaluate(() => { window.tlview.arrange.order[0] = null; relayout(); });
}

// testRuler: ruler labels suit the zoom: a 200 ns view at 2.24 ms is labelled in ms, then as
// offsets in ns, never as millions of ns; a wide view in ms or s.
async function testRuler(page) {
  const labels = async (t0, t1) => {
    await page.evaluate(([a, b]) => { location.hash = `#t0=${a}&t1=${b}`; }, [t0, t1]);
    await page.waitForFunction(([a, b]) => Math.round(window.tlview.t0) === a && Math.round(window.tlview.t1) === b, [t0, t1]);
    await page.waitForTimeout(100);
    return page.evaluate(() => window.tlview.rulerLabels.slice());
  };
  const deep = await labels(2242400, 2242600);
  check(deep.length >= 3 && /^2\.2424\d* ms$/.test(deep[0]) && deep.slice(1).every((l) => /^\+\d+ ns$/.test(l)), `deep zoom: ${deep.join(' | ')}`);
  const mid = await labels(2000000, 2900000);
  check(mid.length >= 3 && mid.every((l) => /^\d\.\d ms$/.test(l)), `0.9 ms view: ${mid.join(' | ')}`);
  const all = [...deep, ...mid];
  check(!all.some((l) => /^\+?-?\d{4,}/.test(l)), 'no label with four digits or more before its point');
  await page.screenshot({ path: path.join(DIR, 'ruler.png'), clip: { x: 0, y: 0, width: 1400, height: 140 } });
  // a drag on the ruler zooms to what it covered (and selects nothing)
  const rb = await page.locator('#ruler').boundingBox();
  const want = await page.evaluate(([a, b]) => { const S = window.tlview, w = document.getElementById('timeline').clientWidth - 230; return [S.t0 + (a - 230) * (S.t1 - S.t0) / w, S.t0 + (b - 230) * (S.t1 - S.t0) / w]; }, [500, 900]);
  const seq = await page.evaluate(() => window.tlview.seq);
  await page.mouse.move(rb.x + 500, rb.y + 10);
  await page.mouse.down();
  await page.mouse.move(rb.x + 700, rb.y + 10, { steps: 4 });
  await page.mouse.move(rb.x + 900, rb.y + 10, { steps: 4 });
  await page.mouse.up();
  await waitData(page, seq);
  const v = await view(page);
  check(Math.abs(v[0] - want[0]) < 2 && Math.abs(v[1] - want[1]) < 2 && await page.evaluate(() => window.tlview.range === null), `a drag on the ruler zooms to [${want[0].toFixed(0)}, ${want[1].toFixed(0)}] (view ${v[0].toFixed(0)}–${v[1].toFixed(0)})`);
}

// testKernel: zoomed onto an overlapped matmul kernel (stretched about 4x): its solo reference
// length solid, the rest hatched; hover tooltip; click opens the details at the bottom.
async function testKernel(page, box, rows) {
  const k = await page.evaluate(async () => {
    const r = await (await fetch('api/find?run=0&q=matmul&t0=20000000&limit=1')).json();
    return { s: r.kernels.s[0], d: r.kernels.d[0], row: r.kernels.row[0], id: r.kernels.id[0] };
  });
  const seq = await page.evaluate(() => window.tlview.seq);
  await page.evaluate((k) => { location.hash = `#t0=${k.s - 2 * k.d}&t1=${k.s + 3 * k.d}`; }, k);
  await waitData(page, seq);
  const info = await page.evaluate((k) => {
    const R = window.tlview.data[0].rows.get(k.row);
    const i = R.id.indexOf(k.id);
    return { mode: R.mode, x: R.x[i], colour: processColor(null, window.tlview.runs[0].rows[k.row].process) };
  }, k);
  check(info.mode === 'kernels', `zoomed in, the row lists kernels (${info.mode})`);
  const band = rows.find((b) => b.row === k.row);
  const xs = await xOf(page, box, k.s), xr = await xOf(page, box, k.s + k.d / info.x), xe = await xOf(page, box, k.s + k.d);
  const light = await page.evaluate((c) => light(c), info.colour);
  // (right of the kernel's name, which is written at its start)
  const solid = await colourCounts(page, [info.colour, light], band.y + 3, band.y + band.h - 3, Math.max(xs + 50, xr - 20) - box.x, xr - box.x - 2);
  const hatched = await colourCounts(page, [info.colour, light], band.y + 3, band.y + band.h - 3, xr - box.x + 2, xe - box.x - 3);
  check(info.x > 3 && solid.counts[1] === 0 && solid.counts[0] > 0.9 * solid.total, `stretch ×${info.x.toFixed(2)}: the solo reference length is solid (${solid.counts[0]} of ${solid.total} px)`);
  check(hatched.counts[0] > 0.2 * hatched.total && hatched.counts[1] > 0.4 * hatched.total, `beyond it, hatched (${hatched.counts[0]} kernel, ${hatched.counts[1]} light of ${hatched.total} px)`);
  await page.mouse.move((xs + xr) / 2, box.y + band.y + band.h / 2);
  await page.waitForTimeout(150);
  const tip = await page.evaluate(() => { const t = document.getElementById('tooltip'); return t.hidden ? '' : t.innerText; });
  check(tip.includes('matmul(float const*, float const*, float*, int)'), `tooltip names the demangled kernel (${tip.split('\n')[0]})`);
  check(/grid \(1024, 1, 1\) · block \(256, 1, 1\)/.test(tip), 'tooltip shows grid and block');
  check(/stretch ×[34]\.\d\d/.test(tip) && tip.includes('verdict time-sliced'), `tooltip shows stretch ~4 and the verdict (${tip.replace(/\n/g, ' / ')})`);
  await page.screenshot({ path: path.join(DIR, 'page-zoomed.png') });
  await page.mouse.down();
  await page.mouse.up();
  await page.waitForSelector('#details:not([hidden])', { timeout: 5000 });
  await page.waitForFunction(() => /effective parallelism/.test(document.getElementById('details-body').innerText), null, { timeout: 5000 });
  const details = await page.locator('#details-body').innerText();
  check(details.includes('effective parallelism') && details.includes('_Z6matmulPKfS0_Pfi'), 'click opens the details with the window evidence');
  check(/its context\s+no MPS · not green/.test(details), `the kernel's context: its MPS state and whether it is green (${(details.split('\n').find((l) => /its context/.test(l)) || '').trim()})`);
  // F fits the selected kernel when no range is selected
  const sq = await page.evaluate(() => window.tlview.seq);
  await page.keyboard.press('f');
  await waitData(page, sq);
  const v = await view(page);
  check(Math.abs(v[0] - (k.s - 0.025 * k.d)) < 2 && Math.abs(v[1] - (k.s + 1.025 * k.d)) < 2, `F fits the selected kernel (view ${v[0].toFixed(0)}–${v[1].toFixed(0)}, kernel ${k.s}+${k.d})`);
  await testSearch(page);
  await page.fill('#find', '');
  await page.locator('#find').blur();
  await page.keyboard.press('Escape');
  check(await page.evaluate(() => document.getElementById('details').hidden), 'Esc closes the details');
  const stats = await page.locator('#stats').innerText();
  check(stats.includes('pid 4100') && /time-sliced/i.test(stats), 'stats panel lists the processes and the verdict');
  check(await page.locator('canvas.chart').count() === 2, 'concurrency chart and stretch histogram present');
  // the stretch histogram is coloured by stretch (the stretch ramp), not by run or verdict
  const hist = await page.evaluate(() => {
    const cv = document.querySelector('canvas.chart[data-kind=stretch]');
    const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    const near = (c) => { const [r, g, b] = hexRgb(c); let n = 0; for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - r) < 4 && Math.abs(d[i + 1] - g) < 4 && Math.abs(d[i + 2] - b) < 4) n++; return n; };
    const hs = [];
    for (let x = 0.125; x < 64; x *= Math.pow(2, 0.25)) hs.push(stretchColor(x * Math.pow(2, 0.125)));
    return { ramp: hs.reduce((a, c) => a + near(c), 0), old: near('#59a14f') + near('#f28e2b') };
  });
  check(hist.ramp > 500 && hist.old === 0, `stretch histogram drawn in the stretch ramp (${hist.ramp} px; old colours ${hist.old} px)`);
  const run = await page.evaluate(() => {
    const r = window.tlview.runs[0];
    return { kernels: r.summary.kernels.toLocaleString(), procs: r.processes.length, gpu: r.lanes[0].name };
  });
  const head = await page.locator('#runinfo').innerText();
  check(head.includes(`${run.kernels} kernels`), `header shows the summary's kernels (${head.replace(/\n/g, ' ')})`);
  check(stats.includes(`${run.kernels}`) && stats.includes(`GPU 0 · ${run.gpu}`), `stats show the summary and the lane (${run.kernels}, ${run.gpu})`);
  // the GPU idle of the measured interval, as the summary has it (the headline's host-paced note)
  const idle = await page.evaluate(() => {
    const s = window.tlview.runs[0].summary;
    return { pct: fmtPct(s.idle_share), paced: s.host_paced };
  });
  check(/GPU idle, measured/i.test(stats) && stats.includes(`${idle.pct}${idle.paced ? ' · host-paced' : ''}`), `stats show the GPU idle of the measured interval (${idle.pct}, host-paced ${idle.paced})`);
  const gb = await page.evaluate(() => window.tlview.runs[0].summary.gain_bounds);
  if (gb) {
    await page.locator('#stats details.gain-bounds summary').first().click();
    const said = (await page.locator('#stats details.gain-bounds').first().innerText()).replace(/\s+/g, ' ');
    check(said.includes(gb.best.replace(/\s+/g, ' ')) && said.includes(gb.worst.replace(/\s+/g, ' ')),
      'stats: "What bounds the predicted gain" opens to the summary\'s two sentences');
  }
  const procRows = await page.locator('#stats table').first().locator('tr').count();
  check(procRows === run.procs + 1, `processes table: a row per process of api/runs (${procRows - 1} of ${run.procs})`);
}

// testSearch: the search over every record (issue 31, item 4): "N matches" for the whole run
// (GET /api/search's total), Enter / Shift+Enter step through them in time order across kinds
// ("k of N"), each selected (its details) and in view; the results list gives the counts per
// kind and per name and the matches as links.
async function testSearch(page) {
  const api = (q, extra) => page.evaluate(async ([q, extra]) => (await fetch(`api/search?run=0&q=${encodeURIComponent(q)}${extra}`)).json(), [q, extra]);
  const info = () => page.locator('#find-info').innerText();
  await page.fill('#find', 'softmax');
  const soft = await api('softmax', '&limit=0');
  await page.waitForFunction((n) => document.getElementById('find-info').textContent === `${n.toLocaleString()} matches`, soft.total, { timeout: 5000 });
  check(soft.total > 1000 && soft.by_kind.kernel === soft.total, `"softmax": ${await info()} in the run (the API: ${soft.total})`);
  // "a": kernels, API calls and NVTX ranges; from a view in the middle of the run
  await page.evaluate(() => { location.hash = '#t0=500000000&t1=500400000'; });
  await page.waitForTimeout(200);
  await page.fill('#find', 'a');
  const all = await api('a', '&limit=0');
  await page.waitForFunction((n) => document.getElementById('find-info').textContent === `${n.toLocaleString()} matches`, all.total, { timeout: 5000 });
  const kinds = Object.entries(all.by_kind).filter(([, n]) => n > 0).map(([k]) => k);
  check(kinds.length >= 3, `"a" matches ${kinds.join(', ')} (${JSON.stringify(all.by_kind)})`);
  const mid = await page.evaluate(() => Math.round((window.tlview.t0 + window.tlview.t1) / 2));
  const from = await api('a', `&at=${mid}&limit=12`);
  const seen = [], titles = [];
  await page.focus('#find');
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('Enter');
    await page.waitForFunction((k) => document.getElementById('find-info').textContent.startsWith(`${(k + 1).toLocaleString()} of `), from.first + i, { timeout: 5000 });
    await page.waitForFunction(() => { // its details opened: the selection is the match
      const T = window.tlview, m = T.find.current;
      return m && (m.kind === 'kernel' ? T.selected && T.selected.id === m.id : T.item && T.item.id === m.id);
    }, null, { timeout: 5000 });
    const cur = await page.evaluate(() => ({ m: window.tlview.find.current, t0: window.tlview.t0, t1: window.tlview.t1, sel: window.tlview.selected, item: window.tlview.item }));
    seen.push(cur);
    titles.push(await page.locator('#details-title').innerText());
  }
  const text = await info();
  check(text === `${(from.first + 12).toLocaleString()} of ${all.total.toLocaleString()}`, `after 12 Enter from the view's centre: "${text}"`);
  const same = seen.every((c, i) => c.m.kind === from.items.kind[i] && c.m.id === from.items.id[i]);
  check(same, `the matches stepped through are the API's, in its order (${seen.map((c) => `${c.m.kind} ${c.m.id}`).join(', ')})`);
  check(new Set(seen.map((c) => c.m.kind)).size >= 2, `stepping crosses kinds (${[...new Set(seen.map((c) => c.m.kind))].join(', ')}; details ${[...new Set(titles)].join(', ')})`);
  const shown = seen.every((c) => (c.m.kind === 'kernel' ? c.sel && c.sel.id === c.m.id : c.item && c.item.id === c.m.id && c.item.kind === c.m.kind) &&
    c.m.s < c.t1 && c.m.s + c.m.d > c.t0);
  check(shown, 'each match is selected and in view');
  await page.keyboard.press('Shift+Enter');
  await page.waitForFunction((k) => document.getElementById('find-info').textContent.startsWith(`${(k + 1).toLocaleString()} of `), from.first + 10, { timeout: 5000 });
  check((await page.evaluate(() => window.tlview.find.current.id)) === from.items.id[10], `Shift+Enter steps back: ${await info()}`);
  // the results list
  await page.click('#tab-search');
  const list = await page.locator('#search-body').innerText();
  const byKind = Object.entries(all.by_kind).every(([k, n]) => list.includes(n.toLocaleString()));
  check(byKind && list.includes(`${all.total.toLocaleString()} matches`), 'the results list counts the matches per kind');
  check(list.includes('cudaLaunchKernel') && /iteration/.test(list), 'the results list names what matched');
  const links = await page.locator('#search-body a.match').count();
  check(links === 200, `the results list shows 200 matches from the current one (${links})`);
  await page.locator('#search-body a.match').nth(5).click();
  await page.waitForFunction((k) => document.getElementById('find-info').textContent.startsWith(`${(k + 1).toLocaleString()} of `), from.first + 10 + 5, { timeout: 5000 });
  check(true, `a match in the list is a link: ${await info()}`);
  await page.screenshot({ path: path.join(DIR, 'search.png') });
}

// testHelp: ? opens the help: the keys, and each verdict with its meaning and rule, as /api/runs
// words them; Esc closes it.
async function testHelp(page) {
  await page.keyboard.press('?');
  await page.waitForSelector('#help:not([hidden])', { timeout: 2000 });
  const text = await page.locator('#help').innerText();
  const meta = await page.evaluate(async () => (await fetch('api/runs')).json());
  const flat = text.replace(/\s+/g, ' ');
  const missing = meta.verdicts.filter((v, i) => !flat.includes(v) || !flat.includes(meta.verdict_meanings[i].replace(/\s+/g, ' ')));
  check(missing.length === 0, `help lists every verdict with its meaning (${missing.length ? `missing ${missing.join(', ')}` : meta.verdicts.join(', ')})`);
  const rules = Object.entries(meta.rules).filter(([r, t]) => !flat.includes(r) || !flat.includes(t.replace(/\s+/g, ' ')));
  check(rules.length === 0, `help lists every rule with its sentence (${rules.map((r) => r[0]).join(', ')})`);
  check(/no-mps: contexts that cannot share the GPU/.test(flat), 'help says which rule decided time-sliced here');
  check(/ctrl \+ wheel/.test(flat) && /drag on the timeline/.test(flat) && /Esc/.test(flat), 'help lists the keys');
  // what bounds the predicted gain: each run's two sentences, as the summary (and the report) word them
  const bounds = meta.runs.filter((r) => r.summary.gain_bounds);
  const unsaid = bounds.filter((r) => !flat.includes(r.summary.gain_bounds.best.replace(/\s+/g, ' ')) ||
    !flat.includes(r.summary.gain_bounds.worst.replace(/\s+/g, ' ')));
  check(bounds.length > 0 && unsaid.length === 0 && /at worst: .*0\.794 at 8/.test(flat),
    `help says what bounds the predicted gain of each run that has one (${bounds.length} runs, ${unsaid.length} unsaid)`);
  await page.screenshot({ path: path.join(DIR, 'help.png') });
  await page.keyboard.press('Escape');
  check(await page.evaluate(() => document.getElementById('help').hidden), 'Esc closes the help');
}

// testPanel800: in an 800 px tall window the details sit in a bottom panel that leaves the plot
// its full width and most of its height, and collapses to its title bar.
async function testPanel800(page, S) {
  await page.setViewportSize({ width: 1000, height: 800 });
  const seq = await page.evaluate(() => window.tlview.seq);
  await page.evaluate(() => { location.hash = '#t0=0&t1=1100000000'; });
  await waitData(page, seq);
  const box = await page.locator('#pinned').boundingBox();
  const strip = S.pinBands.find((b) => b.type === 'vband');
  const w = await page.evaluate(() => window.tlview.data[0].lanes[0].windows[3]);
  await page.mouse.click(await xOf(page, box, (w[1] + w[2]) / 2), box.y + strip.y + strip.h / 2);
  await page.waitForSelector('#details:not([hidden])', { timeout: 5000 });
  await page.waitForTimeout(200);
  const m = await page.evaluate(() => {
    const p = document.getElementById('details').getBoundingClientRect();
    const r = document.getElementById('ruler').getBoundingClientRect();
    const c = document.getElementById('timeline').getBoundingClientRect();
    return { panelTop: p.top, panelH: p.height, rulerBottom: r.bottom, plotW: c.width - 230, winW: window.innerWidth, pad: document.body.style.paddingBottom };
  });
  const plotH = m.panelTop - m.rulerBottom;
  check(plotH >= 300, `800 px tall: ${plotH.toFixed(0)} px of plot above a ${m.panelH.toFixed(0)} px panel`);
  check(m.plotW >= m.winW - 240, `the plot keeps the window's width (${m.plotW.toFixed(0)} of ${m.winW} px)`);
  check(m.pad === `${Math.round(m.panelH)}px` || Math.abs(parseFloat(m.pad) - m.panelH) < 1, `the page makes room below for the panel (${m.pad})`);
  await page.screenshot({ path: path.join(DIR, 'panel-800.png') });
  // the drawer is resized by its top edge (issue 31)
  const grip = await page.locator('#panel-grip').boundingBox();
  await page.mouse.move(grip.x + 200, grip.y + grip.height / 2);
  await page.mouse.down();
  await page.mouse.move(grip.x + 200, grip.y - 75, { steps: 3 });
  await page.mouse.move(grip.x + 200, grip.y - 150, { steps: 3 });
  await page.mouse.up();
  const grown = await page.evaluate(() => ({ h: document.getElementById('details').getBoundingClientRect().height, pad: document.body.style.paddingBottom }));
  check(Math.abs(grown.h - (m.panelH + 150)) <= 3 && Math.abs(parseFloat(grown.pad) - grown.h) < 1, `a drag of its top edge by 150 px makes the drawer ${grown.h.toFixed(0)} px tall (was ${m.panelH.toFixed(0)}), and the page makes room (${grown.pad})`);
  await page.click('#panel-collapse');
  const h = await page.evaluate(() => document.getElementById('details').getBoundingClientRect().height);
  check(h < 45, `the panel collapses to its title bar (${h.toFixed(0)} px)`);
  await page.click('#details-close');
  await page.setViewportSize({ width: 1400, height: 900 });
}

// canvasX is the canvas x (CSS px) of time t in the current view.
async function canvasX(page, t) {
  return page.evaluate((t) => 230 + (t - window.tlview.t0) * (document.getElementById('timeline').clientWidth - 230) / (window.tlview.t1 - window.tlview.t0), t);
}

// testTracks: the rows of copies, API calls and NVTX ranges of the page case's run (4 processes,
// each: a cudaLaunchKernel per kernel, a copy per 50 kernels, NVTX iteration > step > layer).
async function testTracks(page, S) {
  await page.evaluate(() => { closeDetails(); window.scrollTo(0, 0); });
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
      out[row.kind === 'kernels' ? `k${row.stream}` : row.kind] = { band: b, mode: R.mode, z: R.z, id: R.id, s: R.s, d: R.d, name: R.name && Array.from(R.name, (n) => R.names[n]), depth: row.depth };
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
  await testFlowSteps(page, f);
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
  // the selected API call or copy is kept in the URL hash, as a kernel is: a page opened at it
  // shows the same details and flow; closing the details drops it
  const itemHash = (kind, id) => new RegExp(`[#&]item=${kind}(:|%3A)0(:|%3A)${id}(&|$)`);
  await page.evaluate((id) => showItem(0, 'api', id), f.from.id);
  await page.waitForFunction(() => window.tlview.flow && window.tlview.flow.from.kind === 'api', null, { timeout: 5000 });
  const hApi = await page.evaluate(() => location.hash);
  check(itemHash('api', f.from.id).test(hApi) && !/[#&]sel=/.test(hApi), `the selected API call is in the URL hash (${hApi})`);
  const copy = await page.evaluate(() => { // one drawn in the view, else the first one
    const S = window.tlview;
    for (const [row, R] of S.data[0].rows) if (S.runs[0].rows[row].kind === 'copies' && R.mode === 'items' && R.id.length) return R.id[0];
    return 0;
  });
  await page.evaluate((id) => showItem(0, 'copy', id), copy);
  await page.waitForFunction((id) => window.tlview.item && window.tlview.item.id === id && window.tlview.flow && window.tlview.flow.from.kind === 'copy', copy, { timeout: 5000 });
  const hCopy = await page.evaluate(() => location.hash);
  check(itemHash('copy', copy).test(hCopy), `the selected copy is in the URL hash (${hCopy})`);
  for (const [kind, id, hash, title] of [['copy', copy, hCopy, 'Copy'], ['api', f.from.id, hApi, 'CUDA API call']]) {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.reload();
    await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 20000 });
    await page.waitForFunction(() => window.tlview.flow && window.tlview.item, null, { timeout: 5000 });
    const back = await page.evaluate(() => ({ item: window.tlview.item, flow: window.tlview.flow, title: document.getElementById('details-title').textContent, hidden: document.getElementById('details').hidden }));
    check(back.item.kind === kind && back.item.run === 0 && back.item.id === id && back.flow.from.kind === kind && back.flow.from.id === id &&
      back.flow.partners.length === 1 && back.title === title && !back.hidden,
      `the page opened at ${hash} shows the ${kind} ${id} selected (${back.title}, flow to ${JSON.stringify(back.flow.partners.map((p) => p.kind))})`);
  }
  await page.evaluate(() => closeDetails());
  const hClosed = await page.evaluate(() => location.hash);
  check(!/[#&]item=/.test(hClosed), `closing the details drops the item from the hash (${hClosed})`);
}

// testFlowSteps: following a flow (issue 31, item 7), from the selected API call f.from: its
// details link to the kernel it launched; ] selects that kernel and moves the view to it (from a
// view far from both), [ goes back to the call; the kernel's details link back to its launch.
async function testFlowSteps(page, f) {
  const k = f.partners[0];
  await page.evaluate((id) => showItem(0, 'api', id), f.from.id);
  await page.waitForFunction(() => window.tlview.flow && window.tlview.flow.from.kind === 'api' && document.querySelector('#details-body a.flow'), null, { timeout: 5000 });
  const link = await page.locator('#details-body a.flow').first().innerText();
  check(/^kernel /.test(link), `the API call's details link to what it launched ("${link}")`);
  const away = async () => page.evaluate((t) => { const w = window.tlview.t1 - window.tlview.t0; setView(t + 50 * w, t + 51 * w); }, f.from.end);
  const seen = (t0, t1) => page.evaluate(([a, b]) => window.tlview.t0 <= a && window.tlview.t1 >= b, [t0, t1]);
  await away();
  await page.keyboard.press(']');
  await page.waitForFunction((id) => window.tlview.selected && window.tlview.selected.id === id, k.id, { timeout: 5000 });
  check(await seen(k.start, k.end), `] selects the launched kernel ${k.id} and brings it into view`);
  const back = await page.locator('#details-body a.flow').first().innerText();
  check(/^API call cudaLaunchKernel/.test(back), `the kernel's details link to its launch ("${back}")`);
  await away();
  await page.keyboard.press('[');
  await page.waitForFunction((id) => window.tlview.item && window.tlview.item.kind === 'api' && window.tlview.item.id === id, f.from.id, { timeout: 5000 });
  check(await seen(f.from.start, f.from.end), `[ goes back to the API call ${f.from.id}, in view`);
  await page.locator('#details-body a.flow').first().click();
  await page.waitForFunction((id) => window.tlview.selected && window.tlview.selected.id === id, k.id, { timeout: 5000 });
  check(await seen(k.start, k.end), 'a click on the link does as ] does');
  await page.evaluate((id) => showItem(0, 'api', id), f.from.id);
  await page.waitForFunction(() => window.tlview.flow && window.tlview.flow.from.kind === 'api', null, { timeout: 5000 });
}

async function testCompare(page, S, rows) {
  check(S.runs === 2, 'two runs');
  const heads = S.bands.filter((b) => b.type === 'run');
  check(heads.length === 2 && heads[1].y > heads[0].y, 'run B is drawn below run A');
  const rowsA = rows.filter((b) => b.run === 0), rowsB = rows.filter((b) => b.run === 1);
  check(rowsA.length === 8 && rowsB.length === 4, `rows A ${rowsA.length}, B ${rowsB.length}`);
  for (const [name, rs] of [['A', rowsA], ['B', rowsB]]) {
    const c = await colourCounts(page, await page.evaluate(() => [0, 1].map((p) => processColor(null, p))), rs[0].y, rs[rs.length - 1].y + ROWH(rs));
    check(c.counts[0] > 100 && c.counts[1] > 100, `run ${name} rows drawn (${c.counts.join(', ')} px)`);
  }
  const strips = S.pinBands.filter((b) => b.type === 'vband');
  const a = await colourCounts(page, ['#d64541'], strips[0].y, strips[0].y + strips[0].h, null, null, 'pinned');
  const b = await colourCounts(page, ['#2e9e4f'], strips[1].y, strips[1].y + strips[1].h, null, null, 'pinned');
  check(a.counts[0] > 300, `A (MPS off) shows time-sliced windows (${a.counts[0]} px)`);
  check(b.counts[0] > 300, `B (MPS on) shows concurrent windows (${b.counts[0]} px)`);
  const head = await page.locator('#runinfo').innerText();
  check(/faster than A/.test(head), `header shows the measured gain (${head.replace(/\n/g, ' ')})`);
  // the comparison card: both runs' spreads of the processes' own spans, from their summaries
  const spans = await page.evaluate(() => [...document.querySelectorAll('#stats .kv')]
    .map((e) => e.textContent).find((t) => t.startsWith("processes' own spans")));
  check(spans && /^processes' own spans: A .+ to .+ · B .+ to .+; in B the longest over the shortest ×1\.0[01] /.test(spans),
    `the comparison card shows the processes' own spans (${spans})`);
  // the parallelism in each lane tells time-sliced from side by side: A ~1 with ~4 in flight,
  // B about as many as in flight; drawn as the dark area of the concurrency track
  const par = await page.evaluate(() => window.tlview.data.map((d) => {
    const L = d.lanes[0];
    let p = 0, m = 0, n = 0;
    for (let j = 0; j < d.width; j++) if (L.conc_mean[j] > 3) { p += L.par[j]; m += L.conc_mean[j]; n++; }
    return [p / n, m / n];
  }));
  check(par[0][1] > 3.5 && par[0][0] < 1.3, `A: ${par[0][1].toFixed(2)} in flight, parallelism ${par[0][0].toFixed(2)}`);
  check(par[1][1] > 3.5 && par[1][0] > 3, `B: ${par[1][1].toFixed(2)} in flight, parallelism ${par[1][0].toFixed(2)}`);
  // the dark area's mean height over the columns it is drawn in
  const concs = S.pinBands.filter((b) => b.type === 'conc');
  const dark = [];
  for (const b of concs) {
    dark.push(await page.evaluate(([y0, y1]) => {
      const c = document.getElementById('pinned'), w = c.width - 230;
      const d = c.getContext('2d').getImageData(230, y0, w, y1 - y0).data;
      const col = new Array(w).fill(0);
      for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < 300) col[(i / 4) % w]++;
      const used = col.filter((n) => n > 0);
      return used.reduce((a, n) => a + n, 0) / Math.max(1, used.length);
    }, [Math.round(b.y), Math.round(b.y + b.h)]));
  }
  check(dark[0] > 3 && dark[1] > 2.5 * dark[0], `the dark parallelism area is taller in B than in A (${dark[0].toFixed(1)} vs ${dark[1].toFixed(1)} px)`);
  // run labels keep their differing tail; the full label is in a title
  const lab = await page.evaluate(() => {
    ctx.font = '600 12px system-ui, sans-serif';
    return { cut: ellipsisMiddle('samples/spin/traces/mps-off/n4/output.1256.db + 3 more', 150), chars: midChars('samples/spin/traces/mps-off/n4/output.1256.db + 3 more', 30),
      titles: [...document.querySelectorAll('#runinfo .chip')].map((c) => c.title) };
  });
  check(/…/.test(lab.cut) && lab.cut.endsWith('+ 3 more') && lab.cut.startsWith('sam'), `a long label keeps head and tail (${lab.cut})`);
  check(lab.chars.length === 30 && lab.chars.endsWith('.db + 3 more'), `chips cut the middle (${lab.chars})`);
  const labels = await page.evaluate(() => window.tlview.runs.map((r) => r.label));
  check(labels.every((l, i) => lab.titles[i] === l), `chips carry the full label in their title (${lab.titles.slice(0, 2).join(' | ')})`);
  await page.screenshot({ path: path.join(DIR, 'compare.png'), fullPage: true });
  await testAlign(page);
}

// scrollTo scrolls the page so that canvas y (CSS px) is in the window, below the header.
async function scrollTo(page, y) {
  await page.evaluate((y) => {
    const c = document.getElementById('timeline').getBoundingClientRect();
    const at = c.top + y;
    if (at < 200 || at > window.innerHeight - 100) window.scrollBy(0, at - window.innerHeight / 2);
  }, y);
  await page.waitForTimeout(100);
}

// tipAt hovers canvas point (x, y) (CSS px of the timeline) and reads the tooltip ('' if none).
async function tipAt(page, x, y) {
  await scrollTo(page, y);
  const box = await page.locator('#timeline').boundingBox();
  await page.mouse.move(box.x + x, box.y + y);
  await page.waitForTimeout(150);
  return page.evaluate(() => { const t = document.getElementById('tooltip'); return t.hidden ? '' : t.innerText; });
}

// testAlign: run B aligned on A (issue 31, item 2): on a named NVTX range (its first instance
// starts at the same place in both: what is under the pointer there is that range in both), on
// the selected kernel (its same-numbered instance in B), by alt+drag; kept in the URL.
async function testAlign(page) {
  check(await page.locator('#align-group').isVisible(), 'two runs: the alignment control is shown');
  const first = (ri, q, kinds) => page.evaluate(async ([ri, q, kinds]) => (await (await fetch(`api/search?run=${ri}&q=${encodeURIComponent(q)}&kinds=${kinds}&exact=1&limit=1`)).json()).items, [ri, q, kinds]);
  const a = await first(0, 'iteration 5', 'nvtx'), b = await first(1, 'iteration 5', 'nvtx');
  check(a.s[0] !== b.s[0], `iteration 5 starts at ${a.s[0]} ns in A, ${b.s[0]} ns in B`);
  await page.selectOption('#align', 'range');
  await page.fill('#align-range', 'iteration 5');
  await page.press('#align-range', 'Enter');
  await page.waitForFunction(() => window.tlview.shift[1] !== 0, null, { timeout: 5000 });
  const sh = await page.evaluate(() => window.tlview.shift[1]);
  check(sh === a.s[0] - b.s[0], `aligned on range "iteration 5": B shifted by ${sh} ns (A's start − B's: ${a.s[0] - b.s[0]})`);
  check(new RegExp(`[#&]shift=${sh}(&|$)`).test(await page.evaluate(() => location.hash)), 'the shift is in the URL');
  const seq = await page.evaluate(() => window.tlview.seq);
  await page.evaluate((t) => { location.hash = `#t0=${t - 400000}&t1=${t + 1600000}&shift=${window.tlview.shift[1]}`; }, a.s[0]);
  await page.waitForFunction((s) => window.tlview.seq > s && window.tlview.data.length === 2 && window.tlview.data[0].t0 === Math.floor(window.tlview.t0), seq, { timeout: 15000 });
  await page.waitForTimeout(200);
  const d1 = await page.evaluate(() => [window.tlview.data[1].t0, Math.floor(window.tlview.t0 - window.tlview.shift[1])]);
  check(d1[0] === d1[1], `B's viewport query asks for its own times: t0 ${d1[0]} (the view's minus the shift: ${d1[1]})`);
  // under the pointer just after A's start of iteration 5: that range, in A's NVTX row and in B's
  const bands = await page.evaluate(() => window.tlview.bands.filter((b) => b.type === 'row' && window.tlview.runs[b.run].rows[b.row].kind === 'nvtx'));
  const nvA = bands.find((x) => x.run === 0 && x.row === a.row[0]), nvB = bands.find((x) => x.run === 1 && x.row === b.row[0]);
  const x = await page.evaluate((t) => 230 + (t - window.tlview.t0) * (document.getElementById('timeline').clientWidth - 230) / (window.tlview.t1 - window.tlview.t0), a.s[0]);
  const tipA = await tipAt(page, x + 3, nvA.y + 2 + 6), tipB = await tipAt(page, x + 3, nvB.y + 2 + 6);
  check(/iteration 5\b/.test(tipA) && /iteration 5\b/.test(tipB), `at A's start of iteration 5, A shows "${tipA.split('\n')[0]}", B "${tipB.split('\n')[0]}"`);
  const before = await tipAt(page, x - 25, nvB.y + 2 + 6);
  check(!/iteration 5\b/.test(before), `25 px earlier B shows something else ("${before.split('\n')[0]}")`);
  await page.screenshot({ path: path.join(DIR, 'compare-aligned.png') });
  // on the selected kernel: A's 1000th matmul and B's 1000th start at the same place
  const k = await page.evaluate(async () => (await (await fetch('api/search?run=0&q=matmul&kinds=kernel&from=999&limit=1')).json()).items);
  const kb = await page.evaluate(async () => (await (await fetch('api/search?run=1&q=matmul&kinds=kernel&from=999&limit=1')).json()).items);
  await page.evaluate((id) => showKernel(0, id), k.id[0]);
  await page.waitForFunction(() => window.tlview.selected && window.tlview.selected.d != null, null, { timeout: 5000 });
  await page.selectOption('#align', 'kernel');
  await page.waitForFunction((want) => window.tlview.shift[1] === want, k.s[0] - kb.s[0], { timeout: 5000 }).catch(() => {});
  const sk = await page.evaluate(() => [window.tlview.shift[1], document.getElementById('align-info').textContent]);
  check(sk[0] === k.s[0] - kb.s[0] && /matmul #1000/.test(sk[1]), `aligned on the selected kernel: shift ${sk[0]} (want ${k.s[0] - kb.s[0]}), "${sk[1]}"`);
  // by hand: alt+drag on one of B's rows moves B by what the pointer moved
  const rowB = (await page.evaluate(() => window.tlview.bands)).find((b) => b.type === 'row' && b.run === 1);
  await scrollTo(page, rowB.y);
  const box = await page.locator('#timeline').boundingBox();
  const nsPerPx = await page.evaluate(() => (window.tlview.t1 - window.tlview.t0) / (document.getElementById('timeline').clientWidth - 230));
  await page.keyboard.down('Alt');
  await page.mouse.move(box.x + 600, box.y + rowB.y + 5);
  await page.mouse.down();
  await page.mouse.move(box.x + 650, box.y + rowB.y + 5, { steps: 3 });
  await page.mouse.move(box.x + 700, box.y + rowB.y + 5, { steps: 3 });
  await page.mouse.up();
  await page.keyboard.up('Alt');
  const sd = await page.evaluate(() => [window.tlview.shift[1], window.tlview.range]);
  check(Math.abs(sd[0] - sk[0] - 100 * nsPerPx) <= nsPerPx && sd[1] === null, `alt+drag by 100 px moves B by ${sd[0] - sk[0]} ns (${(100 * nsPerPx).toFixed(0)} ns), selecting nothing`);
  await page.reload();
  await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 20000 });
  check(await page.evaluate(() => window.tlview.shift[1]) === sd[0], 'a reload keeps B where it was (the URL)');
  await page.selectOption('#align', 'start');
  check(await page.evaluate(() => window.tlview.shift[1]) === 0 && !/shift=/.test(await page.evaluate(() => location.hash)), 'back to the first kernels');
}

// testDemo: `tlview serve` with no files shows the bundled H200 traces (4 processes, MPS off
// then on): time-sliced above, concurrent below.
async function testDemo(page, S, rows) {
  check(S.runs === 2, 'two runs (MPS off, MPS on)');
  const lanes = await page.evaluate(() => window.tlview.runs.map((r) => `${r.label}: ${r.lanes[0].verdict}`));
  check(/mps-off.*time-sliced/.test(lanes[0]) && /mps-on.*concurrent/.test(lanes[1]), `verdicts ${lanes.join('; ')}`);
  const strips = S.pinBands.filter((b) => b.type === 'vband');
  const a = await colourCounts(page, ['#d64541'], strips[0].y, strips[0].y + strips[0].h, null, null, 'pinned');
  const b = await colourCounts(page, ['#2e9e4f'], strips[1].y, strips[1].y + strips[1].h, null, null, 'pinned');
  check(a.counts[0] > 1000 && b.counts[0] > 200, `time-sliced (${a.counts[0]} px) and concurrent (${b.counts[0]} px) strips drawn`);
  const procColours = await page.evaluate(() => [0, 1, 2, 3].map((p) => processColor(null, p)));
  const k = await colourCounts(page, procColours, rows[0].y, rows[3].y + rows[3].h);
  check(k.counts.every((n) => n > 500), `the 4 kernels of run A drawn (${k.counts.join(', ')} px)`);
  await page.screenshot({ path: path.join(DIR, 'demo.png'), fullPage: true });
}

// testFollow: `tlview serve --follow` of a folder while grow_trace processes write into it
// (kernels of 600 ns every 1 us): the page takes each new batch in without a reload (a new
// generation), draws the new kernels, keeps showing everything or the end when it did and stays
// where it was otherwise, takes in a file that appears in the folder, and marks a captured range.
async function testFollow(page, w1, dir) {
  const st = () => page.evaluate(() => {
    const T = window.tlview, r = T.runs[0];
    return { follow: T.follow, gen: T.generation, kernels: r.summary.kernels, procs: r.processes.length,
      t0: T.t0, t1: T.t1, full: T.fullSpan, caps: (r.captures || []).length };
  });
  const until = (kernels, procs) => page.waitForFunction(([k, p]) => {
    const r = window.tlview.runs[0];
    return r.summary.kernels === k && r.processes.length === p;
  }, [kernels, procs], { timeout: 15000 });
  // the data of the current view, for the current generation (the row's kernels counted)
  const drawn = (n) => page.waitForFunction((n) => {
    const T = window.tlview, d = T.data[0];
    return d && d.t0 === Math.floor(T.t0) && [...d.rows.values()].some((r) => r.n === n);
  }, n, { timeout: 15000 });
  const s0 = await st();
  check(s0.follow && s0.kernels === 40 && s0.procs === 1, `following: ${s0.kernels} kernels of ${s0.procs} process at start (generation ${s0.gen})`);
  await page.evaluate(() => { window.sameDocument = true; });
  await w1.say('60');
  await until(100, 1);
  await drawn(100);
  const s1 = await st();
  check(await page.evaluate(() => window.sameDocument === true), 'the new kernels came in without a reload');
  check(s1.gen > s0.gen, `a new generation (${s0.gen} -> ${s1.gen})`);
  check(s1.t0 <= 0 && s1.t1 >= s1.full && s1.full > s0.full, `the view that showed everything shows everything again (${Math.round(s1.t0)}..${Math.round(s1.t1)} of ${s1.full} ns, was ${s0.full})`);
  await page.waitForTimeout(150);
  const row = (await page.evaluate(() => window.tlview.bands)).find((b) => b.type === 'row');
  const box = await page.locator('#timeline').boundingBox();
  const pc = await page.evaluate(() => processColor(window.tlview.runs[0], 0));
  const xa = (await xOf(page, box, 60000)) - box.x, xb = (await xOf(page, box, 100000)) - box.x;
  const fresh = await colourCounts(page, [pc], row.y, row.y + row.h, xa, xb);
  check(fresh.counts[0] > 50, `the kernels after 60 us (the second batch) are drawn (${fresh.counts[0]} px)`);
  const w2 = startGrow(path.join(dir, 'w2.db'), 102);
  await w2.say('30');
  await until(130, 2);
  const legend = await page.locator('#legend').innerText();
  check(/pid 102/.test(legend), `a file that appeared in the folder joined the run (legend: ${legend.replace(/\s+/g, ' ')})`);
  await w1.say('c');
  await page.waitForFunction(() => (window.tlview.runs[0].captures || []).length === 1, null, { timeout: 15000 });
  await page.waitForTimeout(150);
  // the lane's tracks: pinned by default (else, unpinned or on an older page, in the timeline)
  const pinnedLane = await page.evaluate(() => (window.tlview.pinBands || []).length > 0);
  const lanes = await page.evaluate((p) => (p ? window.tlview.pinBands : window.tlview.bands), pinnedLane);
  const on = pinnedLane ? 'pinned' : 'timeline';
  const lane = lanes.find((b) => b.type === 'lane'), capBand = lanes.find((b) => b.type === 'captures');
  const capColor = await page.evaluate(() => CAPTURE_COLOR);
  const cap = capBand ? await colourCounts(page, [capColor], capBand.y, capBand.y + capBand.h, null, null, on) : { counts: [0] };
  const over = await colourCounts(page, [capColor], lane.y, lane.y + lane.h, null, null, on);
  check(cap.counts[0] > 100, `the captured range is marked in a band of its own under the lane's header (${cap.counts[0]} px)`);
  check(over.counts[0] === 0, `nothing of it is drawn over the lane's header text (${over.counts[0]} px there)`);
  // a view of the beginning stays where it is; a view of the end moves along
  await page.evaluate(() => setView(0, 20000));
  await page.waitForTimeout(100);
  const g2 = (await st()).gen;
  await w1.say('50');
  await page.waitForFunction((g) => window.tlview.generation > g, g2, { timeout: 15000 });
  const s2 = await st();
  check(Math.round(s2.t0) === 0 && Math.round(s2.t1) === 20000, `a view of the beginning stays (${Math.round(s2.t0)}..${Math.round(s2.t1)})`);
  await page.evaluate(() => setView(window.tlview.fullSpan - 20000, window.tlview.fullSpan + 1000));
  await page.waitForTimeout(100);
  const before = await st();
  await w1.say('50');
  await page.waitForFunction((g) => window.tlview.generation > g, before.gen, { timeout: 15000 });
  const s3 = await st();
  check(s3.full > before.full && Math.abs((s3.t1 - s3.full) - (before.t1 - before.full)) < 1 && Math.abs((s3.t1 - s3.t0) - 21000) < 1,
    `a view of the end moves along with it (end ${before.full} -> ${s3.full}, view ${Math.round(s3.t0)}..${Math.round(s3.t1)})`);
  await page.screenshot({ path: path.join(DIR, 'follow.png'), fullPage: true });
  await w2.end();
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
    await page.keyboard.down('Control'); // ctrl+wheel zooms (a plain wheel scrolls the page)
    await page.mouse.wheel(0, -400);
    await page.keyboard.up('Control');
    await page.waitForFunction((s) => window.tlview.seq > s && window.tlview.data[0].t0 === Math.floor(window.tlview.t0), seq, { timeout: 30000, polling: 5 });
    times.push(Date.now() - t);
    queries.push(Math.round(await page.evaluate(() => window.tlview.lastQueryMs)));
  }
  times.sort((a, b) => a - b);
  console.log(`browser: first timeline drawn ${first} ms after navigation; ctrl+wheel zoom to new data drawn: median ${times[4]} ms, max ${times[7]} ms (includes the ${40} ms debounce); query round trips ${queries.join(' ')} ms`);
}

function ROWH(rs) { return rs[rs.length - 1].h; }

main().catch((e) => { console.error(`FAIL: ${e.stack || e}`); process.exit(1); });
