// test_facts.js: the page states no wrong fact (issue 31, items 1-3 and the smaller wrong facts),
// in headless Chromium (playwright-core) against `tlview serve` of committed recordings:
//   turns   a took-turns window (tests/verdicts/kineto-mps-off, --assume-mps off: no overlap, 162
//           context switches) is drawn as its switches, a tick at each handover, never as a red
//           overlap band, and no row is tinted; its evidence lists the switches, not "peak 0".
//   slower  a comparison whose run B is slower says so ("B finishes 1.20× slower than A"), and
//           run B can be aligned on A: on a named NVTX range, on a kernel, by a drag; its
//           predicted gains are written as the report writes them.
//   scale   the concurrency track is scaled by contexts and parallelism (two green contexts of one
//           process at parallelism ~3 are not clipped at "1 process"), and its legend says what
//           it counts; one stretch per name on a screen; the GPU idle said with what it measures.
//   export  what the page downloads (issue 31, item 8): the view and the selection as PNG, a
//           table as CSV, the run as a Chrome trace (read back by tlview), its report as text
//           and JSON; each downloaded and read back.
//   loading the first seconds (item 9) on a generated run of 2M kernels: the port answers at once,
//           the page shows the server's progress while it reads and analyses, then the timeline
//           and its verdicts; the verdict pill explains itself and opens the evidence; the
//           headline above the fold; colour by verdict first where the run overlaps; a clear
//           message once the server is gone.
// Usage: node test_facts.js CASE (env: TLVIEW_BROWSER_DIR, TLVIEW_FIXTURE = tlview,
//   TLVIEW_VERDICTS = tests/verdicts, TLVIEW_GEN = serve_fixture, CHROMIUM). Screenshots go to
//   TLVIEW_BROWSER_DIR.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const { DIR, chromium, FLAGS, state, check, start } = require('./harness');
const CASE = process.argv[2] || 'turns';
const V = process.env.TLVIEW_VERDICTS;
const TIME_SLICED = '#d64541';

// colourCounts counts canvas pixels (device pixels) of the timeline within 6 of each colour (opaque),
// in rows [y0, y1) of CSS px and columns [xa, xb) (default: right of the label gutter).
async function colourCounts(page, colours, y0, y1, xa, xb, id = 'timeline') {
  return page.evaluate(([colours, y0, y1, xa, xb, id]) => {
    const c = document.getElementById(id);
    const x0 = xa == null ? 230 : Math.round(xa), x1 = xb == null ? c.width : Math.round(xb);
    const img = c.getContext('2d').getImageData(x0, Math.round(y0), Math.max(1, x1 - x0), Math.max(1, Math.round(y1 - y0))).data;
    const rgb = colours.map((h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)]);
    const counts = colours.map(() => 0);
    let tinted = 0;
    for (let i = 0; i < img.length; i += 4) {
      // a translucent reddish wash over the row's background: an overlap tint
      if (img[i + 3] > 8 && img[i + 3] < 80 && img[i] > img[i + 1] + 60) tinted++;
      for (let k = 0; k < rgb.length; k++) {
        if (Math.abs(img[i] - rgb[k][0]) < 6 && Math.abs(img[i + 1] - rgb[k][1]) < 6 && Math.abs(img[i + 2] - rgb[k][2]) < 6 && img[i + 3] > 250) counts[k]++;
      }
    }
    return { counts, tinted, total: img.length / 4 };
  }, [colours, y0, y1, xa, xb, id]);
}

// laneBand finds a GPU's track of `type` ('vband', 'conc', 'lane'): on the pinned canvas, where
// the page draws them by default, else (unpinned, or a page without pinning) on the timeline's.
// {band, id (the canvas)}.
async function laneBand(page, type) {
  return page.evaluate((type) => {
    const pin = (window.tlview.pinBands || []).find((b) => b.type === type);
    return pin ? { band: pin, id: 'pinned' } : { band: window.tlview.bands.find((b) => b.type === type), id: 'timeline' };
  }, type);
}

// setHash moves the view to [t0, t1] through the URL hash and waits for its data to be drawn.
async function setHash(page, t0, t1) {
  const seq = await page.evaluate(() => window.tlview.seq);
  await page.evaluate(([a, b]) => { location.hash = `#t0=${a}&t1=${b}`; }, [t0, t1]);
  await page.waitForFunction((s) => window.tlview.seq > s && window.tlview.data.length > 0 &&
    window.tlview.data[0].t0 === Math.floor(window.tlview.t0), seq, { timeout: 15000 });
  await page.waitForTimeout(200);
}

// xOfT is the canvas x (CSS px) of time t (ns) in the current view, for run 0.
function xOfT(page, t) {
  return page.evaluate((t) => 230 + (t - window.tlview.t0) * (document.getElementById('timeline').clientWidth - 230) / (window.tlview.t1 - window.tlview.t0), t);
}

async function testTurns(page) {
  const bands = await page.evaluate(() => window.tlview.bands);
  const { band: strip, id: stripIn } = await laneBand(page, 'vband'); // pinned by default
  const rows = bands.filter((b) => b.type === 'row');
  const api = await page.evaluate(async () => (await fetch('api/runs')).json());
  const lane = api.runs[0].lanes[0];
  check(lane.verdict === 'time-sliced' && lane.overlap_ns === 0, `the lane: ${lane.verdict}, overlap ${lane.overlap_ns} ns`);
  // the whole run: no red overlap band in the verdict strip, no tint on the rows
  const whole = await colourCounts(page, [TIME_SLICED], strip.y + 1, strip.y + strip.h - 1, null, null, stripIn);
  check(whole.counts[0] < 0.02 * whole.total, `no time-sliced overlap band in the verdict strip (${whole.counts[0]} of ${whole.total} px red)`);
  const tint = await colourCounts(page, [], rows[0].y, rows[rows.length - 1].y + rows[rows.length - 1].h);
  check(tint.tinted === 0, `no row tinted as overlapped (${tint.tinted} px tinted)`);
  await page.screenshot({ path: path.join(DIR, 'turns.png') });
  // zoomed onto a burst: a tick at each context switch the server lists, where it happened
  await setHash(page, 100000, 1100000);
  const sw = await page.evaluate(() => {
    const L = window.tlview.data[0].lanes[0];
    return { n: L.nswitches, list: (L.switches || []).map((s) => [s[0], s[1]]), turns: L.turns };
  });
  check(sw.n >= 3 && sw.list.length === sw.n, `switches in view listed by the server (${sw.n})`);
  let marked = 0;
  const turnColour = await page.evaluate(() => (typeof TURN_COLOR === 'string' ? TURN_COLOR : '#b8322e'));
  for (const [t] of sw.list) {
    const x = await xOfT(page, t);
    const c = await colourCounts(page, [turnColour], strip.y + 1, strip.y + strip.h - 1, x - 2, x + 2, stripIn);
    if (c.counts[0] >= 4) marked++;
  }
  check(sw.list.length > 0 && marked === sw.list.length, `a handover tick at each switch (${marked} of ${sw.list.length})`);
  const zoomRed = await colourCounts(page, [TIME_SLICED], strip.y + 1, strip.y + strip.h - 1, null, null, stripIn);
  check(zoomRed.counts[0] === 0, `zoomed in, the idle between switches is not drawn as overlap (${zoomRed.counts[0]} red px)`);
  await page.screenshot({ path: path.join(DIR, 'turns-zoom.png') });
  // hover and click the strip between two switches: what the window is, and its switches
  const box = await page.locator(`#${stripIn}`).boundingBox();
  const mid = sw.list.length > 1 ? (sw.list[0][0] + sw.list[1][0] - sw.list[1][1]) / 2 : 150000;
  await page.mouse.move(box.x + await xOfT(page, mid), box.y + strip.y + strip.h / 2);
  await page.waitForTimeout(200);
  const tip = await page.evaluate(() => document.getElementById('tooltip').innerText);
  check(/took turns/.test(tip) && /no overlap/.test(tip) && /context switches/.test(tip), `the strip's tooltip: ${tip.replace(/\n/g, ' / ')}`);
  await page.mouse.down();
  await page.mouse.up();
  await page.waitForSelector('#details:not([hidden])', { timeout: 5000 });
  await page.waitForFunction(() => /switch/.test(document.getElementById('details-body').innerText), null, { timeout: 5000 });
  const title = await page.locator('#details-title').innerText();
  const body = await page.locator('#details-body').innerText();
  const win = await page.evaluate(async (id) => (await fetch(`api/window?run=0&id=${id}`)).json(), sw.turns[0][0]);
  check(/took turns/.test(title) && !/Overlap/.test(title), `the details' title: ${title}`);
  check(!/peak processes/.test(body) && /one context at a time/.test(body), 'the evidence says one context at a time, no peak of 0');
  check(win.switches > 1 && win.switches_found === win.switches && body.includes(`${win.switches} (`), `the evidence counts the ${win.switches} switches (found again in the run: ${win.switches_found})`);
  const links = await page.locator('#details-body a.goto').count();
  check(links === Math.min(50, win.switches), `the switches listed as links (${links})`);
  // a switch's link shows its handover
  const target = win.switch_times[10];
  await page.locator('#details-body a.goto').nth(10).click();
  await page.waitForTimeout(300);
  const v = await page.evaluate(() => [window.tlview.t0, window.tlview.t1]);
  check(v[0] < target && v[1] > target && v[1] - v[0] < 1e7, `the 11th switch's link shows it (${target} in ${Math.round(v[0])}..${Math.round(v[1])})`);
  await page.screenshot({ path: path.join(DIR, 'turns-evidence.png') });
}

// testSlower: A (MPS off) 2.46 s, B (MPS on) 2.97 s: the header and the comparison card say that B
// is slower, by A's span over B's inverted; never "×0.83 faster".
async function testSlower(page) {
  const c = await page.evaluate(() => window.tlview.compare);
  const want = `B finishes ${(1 / c.measured_gain).toFixed(2)}× slower than A`;
  const head = (await page.locator('#runinfo').innerText()).replace(/\s+/g, ' ');
  check(c.measured_gain < 1 && head.includes(want), `the header: "${head}" (want "${want}"; measured gain ${c.measured_gain})`);
  check(!/faster/.test(head), 'the header does not call B faster');
  await page.waitForSelector('.card', { timeout: 20000 });
  const card = (await page.locator('#stats .card').first().innerText()).replace(/\s+/g, ' ');
  check(card.includes(want) && !/slower than A.*faster than A|faster than A/.test(card), `the comparison card says it too`);
  await page.screenshot({ path: path.join(DIR, 'slower.png') });
}

// testScale: one process with three green contexts side by side at parallelism 2.97 (solo references
// from the solo run): the concurrency track's scale takes the parallelism (0–3), so the peak line
// of 1 process in flight sits at a third of the track, the parallelism's area is not clipped, and
// the gutter and the legend say what each counts; the chart counts contexts.
async function testScale(page) {
  const lane = await page.evaluate(() => window.tlview.runs[0].lanes[0]);
  check(lane.contexts === 3 && lane.processes === 1 && lane.par_max > 2.5, `the lane: ${lane.processes} process, ${lane.contexts} contexts, windows' parallelism up to ${lane.par_max}`);
  const { band: conc, id: concIn } = await laneBand(page, 'conc');
  const top = Math.ceil(lane.par_max);
  // the peak line (processes in flight, colour #2f5fa8): its row on the canvas
  const rowsOf = await page.evaluate(([y0, y1, id]) => {
    const c = document.getElementById(id), w = c.width - 230;
    const d = c.getContext('2d').getImageData(230, y0, w, y1 - y0).data;
    const line = new Array(y1 - y0).fill(0), dark = new Array(w).fill(0);
    for (let i = 0; i < d.length; i += 4) {
      const y = Math.floor(i / 4 / w), x = (i / 4) % w;
      if (Math.abs(d[i] - 0x2f) < 8 && Math.abs(d[i + 1] - 0x5f) < 8 && Math.abs(d[i + 2] - 0xa8) < 8) line[y]++;
      if (d[i] + d[i + 1] + d[i + 2] < 300 && d[i + 3] > 200) dark[x]++;
    }
    return { line, dark: Math.max(...dark) };
  }, [Math.round(conc.y), Math.round(conc.y + conc.h), concIn]);
  const above = rowsOf.line.slice(0, conc.h - 4); // the zero line, at the track's foot, left out
  const lineY = above.indexOf(Math.max(...above));
  const want = conc.h - 2 - (conc.h - 4) / top; // 1 process on a 0–top scale
  check(Math.abs(lineY - want) <= 2, `the peak of 1 process in flight is drawn at ${lineY} px of the ${conc.h} px track (want ${want.toFixed(1)} on a 0–${top} scale)`);
  const parPx = (conc.h - 4) * 2.9 / top;
  check(rowsOf.dark >= parPx - 2 && rowsOf.dark < conc.h - 3, `the parallelism's area is ${rowsOf.dark} px tall (parallelism ~${lane.par_max} of ${top}: not clipped)`);
  const gutter = await page.evaluate(() => typeof concTop === 'function' ? concTop(window.tlview.runs[0].lanes[0]) : null);
  check(gutter === top, `the track's scale is 0–${gutter}`);
  const legend = await page.locator('#legend').innerText();
  check(/processes with a kernel in flight/.test(legend) && /parallelism: solo work done per ns/.test(legend), `the legend says what the track counts (${legend.replace(/\s+/g, ' ').slice(0, 200)})`);
  await page.waitForSelector('canvas.chart[data-kind=concurrency]', { timeout: 20000 });
  const chart = await page.evaluate(() => { const c = document.querySelector('canvas.chart[data-kind=concurrency]'); return [c.dataset.unit, c.previousElementSibling.textContent]; });
  check(chart[0] === 'contexts' && /N contexts in flight/.test(chart[1]), `the chart counts contexts (${chart[1]})`);
  await page.screenshot({ path: path.join(DIR, 'scale.png') });
  // a kernel of a green context says so in its details, with its partition and parent
  await page.evaluate(() => showKernel(0, 0));
  await page.waitForFunction(() => /its context/.test(document.getElementById('details-body').innerText), null, { timeout: 5000 });
  const k = await page.evaluate(async () => (await fetch('api/kernel?run=0&id=0')).json());
  const line = (await page.locator('#details-body').innerText()).split('\n').find((l) => /its context/.test(l)) || '';
  check(k.green === true && /green: an SM partition/.test(line) && line.includes(`context ${k.parent_context}`) && /no MPS/.test(line),
    `a green context's kernel: "${line.trim()}" (context_mps ${k.context_mps}, ${k.context_sms} SMs, parent ${k.parent_context})`);
  // an MPS client's partition is named against the whole GPU (as /api/kernel gives it for
  // samples/partitions' mps50-n2: tests/web kernel_partition); a whole-GPU client has none
  const parts = await page.evaluate(() => [
    contextText({ context_mps: 'on', context_thread_percentage: 50, context_sms: 66, device_sms: 132, green: false }),
    contextText({ context_mps: 'on', context_thread_percentage: null, context_sms: null, device_sms: 132, green: false }),
    contextText({ context_mps: 'off', green: true, context_sms: 64, device_sms: 132, parent_context: 1 })]);
  check(/an MPS client at 50% of the threads: 66 of 132 SMs/.test(parts[0]) && /\(an MPS client\) · not green$/.test(parts[1]) &&
    /green: an SM partition of 64 of 132 SMs, of context 1/.test(parts[2]), `partitions in the details: ${parts.join(' | ')}`);
}

// testStretchesIdle (slower case): every stretch on the screen says of what it is (the summary's
// over all kernels, the GPU's while overlapped), and the GPU idle share says its ns and interval.
async function testStretchesIdle(page) {
  const kpis = await page.$$eval('#stats .kpi .label', (ls) => ls.map((l) => l.textContent));
  const heads = await page.$$eval('#stats th', (ths) => ths.map((t) => t.textContent));
  const bare = [...kpis, ...heads].filter((t) => /^stretch$/i.test(t.trim()));
  check(bare.length === 0 && kpis.some((t) => /stretch, all kernels/i.test(t)) && heads.some((t) => /stretch while overlapped/.test(t)),
    `each stretch is named for what it measures (kpis: ${kpis.filter((t) => /stretch/i.test(t)).join(' | ')}; columns: ${heads.filter((t) => /stretch/i.test(t)).join(' | ')})`);
  const s = await page.evaluate(() => window.tlview.runs[0].summary);
  const note = await page.evaluate(() => [...document.querySelectorAll('#stats .kpi')].find((k) => /GPU idle/.test(k.textContent)).innerText);
  const want = await page.evaluate((s) => `${fmtTime(s.idle_in_ns)} of the ${fmtTime(s.measured_span_ns)} measured`, s);
  check(note.includes(want), `the GPU idle share says what it counts: "${note.replace(/\n/g, ' / ')}" (want "${want}")`);
  check(heads.includes('idle (span − busy)'), 'the GPU table\'s idle says it is the span less the busy time');
}

// testGains (slower case): a predicted gain is written as the report writes it (one definition per
// figure): the summary's "MPS would gain", the comparison's "predicted from A" and the GPU table's
// column say the headline's "MPS would gain 1.04-1.32x", digits and all (the page once wrote
// "1.04–×1.32", two precisions away from the text report's "0.775-1.43x").
async function testGains(page) {
  const head = await page.evaluate(() => window.tlview.runs[0].headline[0]);
  const m = /MPS would gain ~?([0-9.]+(?:-[0-9.]+)?x)/.exec(head);
  check(m != null, `the headline predicts a gain (${head.slice(0, 160)})`);
  if (!m) return;
  const kpis = await page.$$eval('#stats .kpi', (ks) => ks.map((k) => [k.querySelector('.label').textContent, k.querySelector('.big').textContent]));
  const gain = kpis.find(([l]) => /^MPS would gain/.test(l)), fromA = kpis.find(([l]) => l === 'predicted from A');
  check(gain && gain[1] === m[1] && fromA && fromA[1] === m[1],
    `the gains on the page are the headline's ${m[1]}: "${gain && gain[1]}" (summary), "${fromA && fromA[1]}" (comparison)`);
  const col = await page.$$eval('#stats table', (ts) => {
    for (const t of ts) {
      const i = [...t.querySelectorAll('th')].findIndex((h) => h.textContent === 'MPS would gain');
      if (i >= 0) return t.querySelector('tbody tr, tr:nth-child(2)').children[i].textContent;
    }
    return null;
  });
  check(col === m[1], `and the GPU table's column: "${col}"`);
}

// pngSize reads a PNG's width and height from its IHDR chunk (null when it is no PNG).
function pngSize(buf) {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (buf.length < 24 || !sig.every((b, i) => buf[i] === b) || buf.toString('latin1', 12, 16) !== 'IHDR') return null;
  return [buf.readUInt32BE(16), buf.readUInt32BE(20)];
}

// download clicks the menu item `id` of the Export menu (or the element `sel`) and returns the
// file it downloads, read back.
async function downloaded(page, sel, menu = true) {
  if (menu) await page.click('#export-open');
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), page.click(sel)]);
  const file = await d.path();
  return { name: d.suggestedFilename(), data: fs.readFileSync(file) };
}

async function testExport(page) {
  const dims = await page.evaluate(() => ({ w: document.getElementById('timeline').width,
    h: ['ruler', 'pinned', 'timeline'].map((id) => document.getElementById(id)).reduce((a, c) => a + (!c || c.hidden ? 0 : c.height), 0) }));
  const png = await downloaded(page, '#export-png');
  const size = pngSize(png.data);
  check(size && size[0] === dims.w && size[1] === dims.h, `the view as PNG: ${png.name}, ${size && size.join('x')} (the ruler, the pinned tracks and the timeline: ${dims.w}x${dims.h})`);
  // a selection: a drag on the pinned concurrency track
  const pin = await page.locator('#pinned').boundingBox();
  const { band: conc, id: concIn } = await laneBand(page, 'conc');
  await page.mouse.move(pin.x + 400, pin.y + conc.y + 20);
  await page.mouse.down();
  await page.mouse.move(pin.x + 600, pin.y + conc.y + 20, { steps: 4 });
  await page.mouse.move(pin.x + 800, pin.y + conc.y + 20, { steps: 4 });
  await page.mouse.up();
  await page.waitForFunction(() => window.tlview.rangeStats && document.querySelector('#range-body .dtable'), null, { timeout: 10000 });
  const sel = pngSize((await downloaded(page, '#export-sel')).data);
  check(sel && Math.abs(sel[0] - (230 + 400)) <= 2 && sel[1] === dims.h, `the selection as PNG: ${sel && sel.join('x')} (the labels and its 400 px)`);
  // a table as CSV: the kernels by name of the range
  const r = await page.evaluate(() => window.tlview.rangeStats[0]);
  const names = page.locator('#range-body .blk.wide .dtable').first();
  const csv = (await downloaded(page, '#range-body .blk.wide .dtable >> nth=0 >> a.csv', false)).data.toString('utf8');
  const lines = csv.trim().split('\r\n');
  check(lines[0] === 'name,kernels,time inside,mean,stretch' && lines.length === r.nnames + 1 &&
    r.names.every((n) => lines.some((l) => l.startsWith(`${/[",]/.test(n.name) ? `"${n.name.replace(/"/g, '""')}"` : n.name},${n.kernels},${n.ns},`))),
  `the kernels by name as CSV: ${lines.length - 1} rows of ${r.nnames} names (${lines[0]})`);
  void names;
  // the run as a Chrome trace, read back by tlview
  const sum = await page.evaluate(() => window.tlview.runs[0].summary);
  const trace = await downloaded(page, '#export-chrome-0');
  const t = JSON.parse(trace.data.toString('utf8'));
  const kernels = t.traceEvents.filter((e) => e.cat === 'kernel').length;
  check(kernels === sum.kernels && /^tlview-trace/.test(trace.name), `the run as a Chrome trace: ${trace.name}, ${kernels} kernel events of ${sum.kernels}`);
  const tmp = path.join(os.tmpdir(), `tlview-export-${process.pid}.json`);
  fs.writeFileSync(tmp, trace.data);
  const back = JSON.parse(require('child_process').execFileSync(process.env.TLVIEW_FIXTURE, ['report', '--format', 'json', tmp]));
  fs.rmSync(tmp);
  check(back.summary.kernels === sum.kernels && back.summary.span_ns === sum.span_ns, `tlview reads it back: ${back.summary.kernels} kernels over ${back.summary.span_ns} ns`);
  const head = await page.evaluate(() => window.tlview.runs[0].headline[0]);
  const text = (await downloaded(page, '#export-text-0')).data.toString('utf8');
  check(text.startsWith(head), `the report as text starts with the headline (${text.split('\n')[0].slice(0, 80)}…)`);
  const json = JSON.parse((await downloaded(page, '#export-json-0')).data.toString('utf8'));
  check(json.summary.kernels === sum.kernels && json.headline[0] === head, `the report as JSON: ${json.summary.kernels} kernels, the same headline`);
}

// testLoading: the page opened as soon as the URL is printed, while the server reads 2M kernels.
async function testLoading(page, server, t0) {
  const token = new URL(server.open).searchParams.get('token');
  const first = await (await fetch(`${server.url}api/status`, { headers: { Authorization: `Bearer ${token}` } })).json();
  const early = await fetch(`${server.url}api/runs`, { headers: { Authorization: `Bearer ${token}` } });
  check(first.state === 'loading' && early.status === 503 && early.headers.get('retry-after') === '1',
    `the port answers ${Date.now() - t0} ms after the start, before the run is read: ${first.state} (${first.stage}), /api/runs ${early.status} with Retry-After ${early.headers.get('retry-after')}`);
  await page.goto(server.open);
  await page.waitForSelector('#loading:not([hidden])', { timeout: 10000 });
  const box = await page.locator('#loading').innerText();
  check(/reading the run/.test(box) && /(reading|analysing|indexing)/.test(box), `the page shows the progress: ${box.replace(/\n/g, ' / ').slice(0, 160)}`);
  await page.screenshot({ path: path.join(DIR, 'loading.png') });
  await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 120000 });
  const seen = await page.evaluate(() => loadingSeen.slice());
  const ready = await (await fetch(`${server.url}api/status`, { headers: { Authorization: `Bearer ${token}` } })).json();
  check(ready.state === 'ready' && seen.length >= 1 && await page.locator('#loading').isHidden(), `then the timeline (after ${(ready.elapsed_ms / 1000).toFixed(1)} s; stages shown: ${seen.join(' | ')})`);
  const run = await page.evaluate(() => window.tlview.runs[0]);
  check(run.summary.kernels >= 2000000 && run.lanes[0].verdict === 'time-sliced', `${run.summary.kernels} kernels, GPU 0 ${run.lanes[0].verdict}`);
  // colour by verdict first, where the run overlaps
  const colour = await page.evaluate(() => [document.getElementById('colorby').value, document.getElementById('colorby').options[0].value, window.tlview.colorBy]);
  check(colour.join() === 'verdict,verdict,verdict', `colour by verdict offered first and taken (${colour.join(', ')})`);
  // the headline above the fold
  const hl = await page.evaluate(() => { const e = document.querySelector('#headline .headline-line'); const r = e && e.getBoundingClientRect(); return e ? { text: e.textContent, bottom: r.bottom } : null; });
  check(hl && hl.text === run.headline[0] && hl.bottom < 200, `the headline above the timeline (${hl && hl.bottom.toFixed(0)} px from the top): ${hl && hl.text.slice(0, 90)}…`);
  // the verdict pill: what it means on hover, the evidence on click
  await page.waitForTimeout(300);
  const pill = await page.evaluate(() => window.tlview.pinBands.find((b) => b.type === 'lane').pill);
  const pb = await page.locator('#pinned').boundingBox();
  await page.mouse.move(pb.x + (pill[0] + pill[1]) / 2, pb.y + 11);
  await page.waitForTimeout(200);
  const tip = await page.evaluate(() => document.getElementById('tooltip').innerText);
  const meaning = await page.evaluate(() => window.tlview.meanings[window.tlview.verdicts.indexOf('time-sliced')]);
  const rule = run.lanes[0].by_verdict['time-sliced'].rule;
  check(tip.includes(meaning) && tip.includes(rule), `the pill explains itself: ${tip.replace(/\n/g, ' / ')}`);
  await page.mouse.down();
  await page.mouse.up();
  await page.waitForSelector('#details:not([hidden])', { timeout: 5000 });
  const title = await page.locator('#details-title').innerText(), body = await page.locator('#details-body').innerText();
  check(/GPU 0: time-sliced/.test(title) && body.includes(run.lanes[0].evidence || '~~') && /Time by verdict/i.test(body), `a click opens the GPU's evidence (${title})`);
  await page.screenshot({ path: path.join(DIR, 'loaded.png') });
  // the server gone: a clear message, not "Failed to fetch"
  server.proc.kill('SIGTERM');
  await new Promise((ok) => server.proc.on('exit', ok));
  await page.keyboard.press('Escape');
  await page.keyboard.press('w');
  await page.waitForSelector('#gone:not([hidden])', { timeout: 10000 });
  const gone = await page.locator('#gone').innerText();
  const err = await page.evaluate(() => (document.getElementById('error').hidden ? '' : document.getElementById('error').textContent));
  check(/server is not answering/.test(gone) && !/Failed to fetch/.test(err), `the server gone: "${gone.slice(0, 70)}…"${err ? ` (error box: ${err})` : ''}`);
}

async function main() {
  const args = {
    turns: ['serve', '--port', '0', '--assume-mps', 'off', path.join(V, 'kineto-mps-off')],
    slower: ['serve', '--port', '0', '--baseline', path.join(V, 'solo-torch-heavy'), path.join(V, 'torch-heavy-mps-off'),
      '--compare', path.join(V, 'torch-heavy-mps-on')],
    scale: ['serve', '--port', '0', '--baseline', path.join(V, 'solo-spin'), path.join(V, 'ctx-green-3')],
    export: ['serve', '--port', '0', '--assume-mps', 'off', path.join(V, 'kineto-mps-off')],
  };
  let big = null;
  if (CASE === 'loading') { // a run big enough to take a while to read and analyse
    big = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-big-')), 'big.db');
    require('child_process').execFileSync(process.env.TLVIEW_GEN, ['--save', big, '--kernels', '2000000', '--procs', '16']);
    args.loading = ['serve', '--port', '0', big];
  }
  // the browser first, so that the loading case opens the page the moment the URL is printed
  // (launching Chromium takes seconds on a loaded machine, and the run could be read meanwhile)
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tlview-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM, headless: true, args: FLAGS,
    viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1, acceptDownloads: true,
  });
  const errors = [];
  const page = browser.pages()[0] || await browser.newPage();
  const t0 = Date.now();
  const server = await start(args[CASE], 'tlview serve');
  const expected = (m) => /status of 503/.test(m.text()) || (CASE === 'loading' && /ERR_CONNECTION_REFUSED|Failed to load resource/.test(m.text()));
  page.on('console', (m) => { if (m.type() === 'error' && !expected(m)) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    if (CASE === 'loading') {
      await testLoading(page, server, t0);
      check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
      return;
    }
    await page.goto(server.open);
    await page.waitForFunction(() => window.tlview && window.tlview.ready, null, { timeout: 30000 });
    await page.waitForTimeout(300);
    if (CASE === 'turns') await testTurns(page);
    else if (CASE === 'slower') { await testSlower(page); await testStretchesIdle(page); await testGains(page); }
    else if (CASE === 'scale') await testScale(page);
    else if (CASE === 'export') await testExport(page);
    check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
    if (big) fs.rmSync(path.dirname(big), { recursive: true, force: true });
  }
  console.log(`${state.failures === 0 ? 'PASS' : 'FAIL'}: browser ${CASE}, ${state.failures} failed checks`);
  process.exit(state.failures ? 1 : 0);
}

main().catch((e) => { console.error(`FAIL: ${e.stack || e}`); process.exit(1); });
