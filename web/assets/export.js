// export.js: what the page downloads (the header's Export menu): the timeline as it is drawn
// (the ruler, the pinned tracks and every row over the view's time) or the selection alone as
// a PNG, composed from the canvases; each run as a Chrome trace to open in Perfetto, and its
// report as text or JSON (GET /api/export: the server's `tlview export` and `tlview report`).
// The tables' CSV downloads are tables.js's.
'use strict';

// ------------------------------------------------------------------ constants

const EXPORT_FORMATS = [ // GET /api/runs "exports": what the server offers, in the menu's order
  ['chrome', 'as a Chrome trace (open in ui.perfetto.dev)'],
  ['text', 'report as text'],
  ['json', 'report as JSON'],
];

// ------------------------------------------------------------------ the menu

// exportSetup fills the Export menu: the PNGs, then per run the exports the server offers.
function exportSetup(offered) {
  const menu = $('export-menu');
  menu.textContent = '';
  const item = (id, text, fn) => {
    const b = el('button', 'menu-item', text);
    b.id = id;
    b.addEventListener('click', () => { menu.hidden = true; fn(); });
    menu.append(b);
    return b;
  };
  item('export-png', 'The view as PNG', () => exportPNG(false));
  item('export-sel', 'The selection as PNG', () => exportPNG(true));
  S.runs.forEach((run, ri) => {
    const tag = S.runs.length > 1 ? `Run ${runLetter(ri)} ` : 'The run ';
    for (const [f, words] of EXPORT_FORMATS) {
      if (!offered.includes(f)) continue;
      const a = el('a', 'menu-item', `${tag}${f === 'chrome' ? words : words.replace('report', '— its report')}`);
      a.id = `export-${f}-${ri}`;
      a.href = `api/export?run=${ri}&format=${f}`;
      a.download = '';
      a.addEventListener('click', () => { menu.hidden = true; });
      menu.append(a);
    }
  });
}

// toggleExport opens or closes the Export menu (the selection's PNG offered only with one).
function toggleExport() {
  const menu = $('export-menu');
  menu.hidden = !menu.hidden;
  $('export-sel').disabled = !S.range;
}

// ------------------------------------------------------------------ PNG

// exportPNG downloads the timeline as drawn: the ruler, the pinned tracks and the timeline's
// canvas stacked, in device pixels; with `sel`, only the selection's columns (after the labels'
// gutter) and, for an area, only its rows' part of the timeline.
function exportPNG(sel) {
  if (sel && !S.range) return;
  draw(); // the canvases as they are now, the pointer's line left out
  const dpr = window.devicePixelRatio || 1;
  const parts = [ruler, ...(S.pinHeight ? [pinned] : []), canvas].map((c) => ({ c, y0: 0, y1: c.height }));
  let x0 = 0, x1 = canvas.width;
  if (sel) {
    x0 = Math.max(GUTTER, Math.floor(timeToX(S.range.t0))) * dpr;
    x1 = Math.min(cssWidth, Math.ceil(timeToX(S.range.t1))) * dpr;
    const spans = S.range.rows ? (() => { ctx = mainCtx; surfH = S.height; return rangeSpans(); })() : null;
    if (spans && spans.length) {
      const tl = parts[parts.length - 1];
      tl.y0 = Math.floor(Math.min(...spans.map((s) => s[0])) * dpr);
      tl.y1 = Math.ceil(Math.max(...spans.map((s) => s[1])) * dpr);
    }
  }
  const gw = sel ? GUTTER * dpr : 0; // the labels, then the selection's columns
  const out = document.createElement('canvas');
  out.width = gw + (x1 - x0);
  out.height = parts.reduce((a, p) => a + p.y1 - p.y0, 0);
  const c = out.getContext('2d');
  c.fillStyle = '#fff';
  c.fillRect(0, 0, out.width, out.height);
  let y = 0;
  for (const p of parts) {
    const h = p.y1 - p.y0;
    if (gw) c.drawImage(p.c, 0, p.y0, gw, h, 0, y, gw, h);
    c.drawImage(p.c, x0, p.y0, x1 - x0, h, gw, y, x1 - x0, h);
    y += h;
  }
  out.toBlob((blob) => download(sel ? 'tlview-selection.png' : 'tlview-view.png', blob), 'image/png');
}
