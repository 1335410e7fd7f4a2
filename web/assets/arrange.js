// arrange.js: how the user arranges the timeline, as in Perfetto: a GPU's tracks (its header,
// concurrency track and verdict strip) pinned to the top, where they stay in sight while the
// processes' rows scroll under them (a canvas of their own, #pinned, sticky under the ruler);
// rows hidden, and moved up or down, by the small controls a row's label shows under the
// pointer. The layout (rows.js) reads the choices; they are kept in the URL (unpin=, hide=,
// order=).
'use strict';

// ------------------------------------------------------------------ constants

const PIN_SHARE = 0.4;     // pinned tracks take at most this share of the window's height by default
const ROW_CTL_W = 16;      // px of each row control (▲ ▼ ✕) at the gutter's right edge
const ROW_CTLS = ['up', 'down', 'hide'];

/* interface Arrangement (S.arrange) {
 *   unpinned: Set of 'run.lane' whose tracks stay in the scrolled timeline (the others pinned),
 *             or null until the layout decides (everything pinned that fits in PIN_SHARE)
 *   hidden:   per run, the Set of hidden row ids
 *   order:    per run, the row ids in the order chosen (null: the server's order)
 * } */

// arrangeInit makes the arrangement of a new set of runs (at start, and when they change:
// follow.js), from the URL's when it names some.
function arrangeInit(h) {
  S.arrange = { unpinned: null, hidden: S.runs.map(() => new Set()), order: S.runs.map(() => null) };
  if (!h) return;
  if (h.unpin != null) S.arrange.unpinned = new Set(h.unpin.filter(Boolean));
  for (const [ri, id] of h.hide || []) if (S.arrange.hidden[ri] && id < S.runs[ri].rows.length) S.arrange.hidden[ri].add(id);
  (h.order || []).forEach(([ri, ids]) => {
    const n = S.runs[ri] ? S.runs[ri].rows.length : 0;
    if (n && ids.length === n && ids.every((i) => i < n) && new Set(ids).size === n) S.arrange.order[ri] = ids;
  });
}

// isPinned: whether lane li of run ri has its tracks pinned to the top.
function isPinned(ri, li) {
  return !S.arrange.unpinned.has(`${ri}.${li}`);
}

// pinDefaults pins every lane whose tracks fit, in order, in PIN_SHARE of the window (the first
// lane always): with many GPUs the rest stay in the scrolled timeline.
function pinDefaults(laneH) {
  if (S.arrange.unpinned) return;
  S.arrange.unpinned = new Set();
  let used = 0;
  S.runs.forEach((run, ri) => run.lanes.forEach((lane, li) => {
    const h = laneH(ri, li);
    if (used > 0 && used + h > PIN_SHARE * window.innerHeight) S.arrange.unpinned.add(`${ri}.${li}`);
    else used += h;
  }));
}

// togglePin pins or unpins lane li of run ri.
function togglePin(ri, li) {
  const k = `${ri}.${li}`;
  if (S.arrange.unpinned.has(k)) S.arrange.unpinned.delete(k); else S.arrange.unpinned.add(k);
  relayout();
}

// arrangeRows puts the rows of a lane (ids, in the layout's order) in the order chosen, without
// the hidden ones.
function arrangeRows(ri, ids) {
  const hidden = S.arrange.hidden[ri], order = S.arrange.order[ri];
  let out = ids.filter((id) => !hidden.has(id));
  if (order) {
    const rank = new Map(order.map((id, i) => [id, i]));
    out = out.sort((a, b) => rank.get(a) - rank.get(b));
  }
  return out;
}

// rowAction hides row `row` of run ri, or moves it past the row shown before or after it in its
// lane ('up', 'down').
function rowAction(ri, row, what) {
  if (what === 'hide') {
    S.arrange.hidden[ri].add(row);
  } else {
    const shown = S.bands.filter((b) => b.type === 'row' && b.run === ri && b.lane === S.runs[ri].rows[row].lane).map((b) => b.row);
    const i = shown.indexOf(row), j = what === 'up' ? i - 1 : i + 1;
    if (i < 0 || j < 0 || j >= shown.length) return;
    const order = (S.arrange.order[ri] || currentOrder(ri)).slice();
    const a = order.indexOf(row), b = order.indexOf(shown[j]);
    [order[a], order[b]] = [order[b], order[a]];
    S.arrange.order[ri] = order;
  }
  relayout();
}

// currentOrder is every row id of run ri in the order the layout draws them (the hidden and the
// collapsed ones where the server puts them).
function currentOrder(ri) {
  const drawn = S.bands.filter((b) => b.type === 'row' && b.run === ri).map((b) => b.row);
  const rest = S.runs[ri].rows.map((_, i) => i).filter((i) => !drawn.includes(i));
  return [...drawn, ...rest];
}

// showHidden shows every hidden row again.
function showHidden() {
  S.arrange.hidden.forEach((h) => h.clear());
  relayout();
}

// relayout lays the timeline out again after a change of arrangement and asks for the rows
// that are now shown.
function relayout() {
  hideTooltip();
  layout();
  writeHash();
  renderLegend();
  requestDraw();
  scheduleFetch();
}

// rowControl is the control of a row's label under canvas x ('up', 'down', 'hide'), or null.
function rowControl(x) {
  const i = Math.floor((x - (GUTTER - 4 - ROW_CTLS.length * ROW_CTL_W)) / ROW_CTL_W);
  return x < GUTTER - 4 && i >= 0 && i < ROW_CTLS.length ? ROW_CTLS[i] : null;
}

// drawRowControls draws ▲ ▼ ✕ at the right of a row's label (while the pointer is over it).
function drawRowControls(b) {
  const y = b.y + Math.min(b.h, ROW_H) / 2;
  const x0 = GUTTER - 4 - ROW_CTLS.length * ROW_CTL_W;
  ctx.fillStyle = '#f7f8fa';
  ctx.fillRect(x0 - 2, b.y + 1, ROW_CTLS.length * ROW_CTL_W + 4, Math.min(b.h, ROW_H) - 2);
  ctx.font = '10px system-ui, sans-serif';
  ROW_CTLS.forEach((c, i) => {
    const hot = S.hover && S.hover.h && S.hover.h.rowctl === c && S.hover.h.band === b;
    ctx.fillStyle = hot ? '#1d2430' : '#8b94a3';
    ctx.fillText({ up: '▲', down: '▼', hide: '✕' }[c], x0 + i * ROW_CTL_W + 4, y);
  });
  ctx.font = '11px system-ui, sans-serif';
}

// arrangeLegend adds to the legend how many rows are hidden, with a way to show them again.
function arrangeLegend(lg) {
  const n = S.arrange ? S.arrange.hidden.reduce((a, h) => a + h.size, 0) : 0;
  if (!n) return;
  const b = el('button', 'item linkish', `${n} row${n === 1 ? '' : 's'} hidden: show`);
  b.id = 'show-hidden';
  b.addEventListener('click', showHidden);
  lg.append(b);
}

// arrangeHash writes the arrangement into the URL's parameters p (only what differs from the
// default): unpin=R.L,..., hide=R.ID,..., order=R:ID.ID...;...
function arrangeHash(p) {
  const a = S.arrange;
  if (!a) return;
  if (a.unpinned && a.unpinned.size) p.set('unpin', [...a.unpinned].join(','));
  const hide = a.hidden.flatMap((h, ri) => [...h].map((id) => `${ri}.${id}`));
  if (hide.length) p.set('hide', hide.join(','));
  const order = a.order.map((o, ri) => (o ? `${ri}:${o.join('.')}` : null)).filter(Boolean);
  if (order.length) p.set('order', order.join(';'));
}

// arrangeReadHash reads what arrangeHash wrote (into the object readHash returns).
function arrangeReadHash(p) {
  const pair = (s) => { const m = /^(\d+)\.(\d+)$/.exec(s); return m ? [+m[1], +m[2]] : null; };
  return {
    unpin: p.has('unpin') ? p.get('unpin').split(',').filter((s) => pair(s)) : null,
    hide: (p.get('hide') || '').split(',').map(pair).filter(Boolean),
    order: (p.get('order') || '').split(';').map((s) => /^(\d+):([\d.]+)$/.exec(s)).filter(Boolean).map((m) => [+m[1], m[2].split('.').map(Number)]),
  };
}
