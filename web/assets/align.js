// align.js: run B of a comparison aligned on run A. Each run's times start at its first kernel,
// so the same iteration of the two runs is drawn at different places; B can be shifted so that
// an NVTX range (or a captured range) of one name starts at the same place in both, or the
// selected kernel and the same kernel of the other run (its same-numbered instance by name), or
// by hand (alt+drag on B). The view's axis stays A's; S.shift[1] is added to B's times (rows.js
// onRun), its queries ask for the shifted range (api.js runRange), and the shift is kept in the
// URL (shift=NS).
'use strict';

// ------------------------------------------------------------------ setup

// alignSetup shows the alignment control when there are two runs (not with more: an experiment's
// runs all start at their first kernels).
function alignSetup() {
  $('align-group').hidden = S.runs.length !== 2; // B on A: a comparison's, not an experiment's
  $('align').value = S.align ? S.align.how : 'start';
  alignInfo();
}

// alignInfo says how B is placed beside the control and in its run header.
function alignInfo() {
  const sh = S.shift[1] || 0;
  const what = S.align ? ` (${S.align.what})` : '';
  $('align-info').textContent = sh ? `B ${sh > 0 ? '+' : '−'}${fmtTime(Math.abs(sh), 4)}${what}` : '';
}

// alignShift places B at `ns` from A (how: 'start', 'range', 'kernel', 'drag'; what: words for
// it), keeps the view where it is, and asks for B's data again.
function alignShift(ns, how, what) {
  S.shift = [0, Math.round(ns)];
  S.align = how === 'start' ? null : { how, what };
  $('align').value = how;
  alignInfo();
  writeHash();
  requestDraw();
  scheduleFetch();
  if (S.range) fetchRange();
}

// ------------------------------------------------------------------ ways to align

// rangeStart is where the first range named `name` of run ri starts: a captured range of that
// name, else the first NVTX range of exactly that name, else the first whose name contains it;
// null when the run has none.
async function rangeStart(ri, name) {
  const cap = (S.runs[ri].captures || []).find((c) => c.name === name);
  if (cap) return { s: cap.start, name: cap.name };
  for (const exact of [1, 0]) {
    const r = await getJSON(`api/search?run=${ri}&q=${encodeURIComponent(name)}&kinds=nvtx&exact=${exact}&limit=1&names=0`);
    if (r.items.id.length) return { s: r.items.s[0], name: r.items.name[0] };
  }
  return null;
}

// alignOnRange starts the range named `name` at the same place in both runs.
async function alignOnRange(name) {
  name = name.trim();
  if (!name) return;
  try {
    const [a, b] = await Promise.all([rangeStart(0, name), rangeStart(1, name)]);
    if (!a || !b) { showError(`No range named "${name}" in run ${a ? 'B' : 'A'}`); return; }
    alignShift(a.s - b.s, 'range', `range "${a.name}"`);
  } catch (e) {
    showError(`Align: ${e.message}`);
  }
}

// alignOnKernel puts the selected kernel and its counterpart in the other run at the same place:
// the kernel of the same name that comes as many instances later in that run (the n-th call of
// a name in A, the n-th in B; the other run's last when it has fewer).
async function alignOnKernel() {
  const sel = S.selected;
  if (!sel) { showError('Select a kernel first (click it), then align B on it'); $('align').value = S.align ? S.align.how : 'start'; return; }
  try {
    const k = await getJSON(`api/kernel?run=${sel.run}&id=${sel.id}`);
    const q = `q=${encodeURIComponent(k.name)}&kinds=kernel&exact=1&names=0`;
    const mine = await getJSON(`api/search?run=${sel.run}&${q}&at=${k.start}&limit=0`);
    const other = 1 - sel.run;
    const count = await getJSON(`api/search?run=${other}&${q}&limit=0`);
    if (!count.total) { showError(`Run ${runLetter(other)} has no kernel ${shortName(k.name)}`); return; }
    const n = Math.min(mine.first, count.total - 1);
    const twin = await getJSON(`api/search?run=${other}&${q}&from=${n}&limit=1`);
    const ta = sel.run === 0 ? k.start : twin.items.s[0], tb = sel.run === 0 ? twin.items.s[0] : k.start;
    alignShift(ta - tb, 'kernel', `${shortName(k.name)} #${n + 1}`);
  } catch (e) {
    showError(`Align: ${e.message}`);
  }
}

// onAlignChange follows the control: back to the first kernels, on a range (its name asked in
// the box beside), on the selected kernel.
function onAlignChange() {
  const how = $('align').value;
  $('align-range').hidden = how !== 'range';
  if (how === 'start') alignShift(0, 'start', '');
  else if (how === 'range') $('align-range').focus();
  else if (how === 'kernel') alignOnKernel();
}

// ------------------------------------------------------------------ by hand

// alignDragStart starts shifting B by hand (alt+drag on one of B's bands); true when it did.
function alignDragStart(ev, band) {
  if (!ev.altKey || !band || band.run !== 1 || S.runs.length !== 2) return false;
  drag = { align: true, x: ev.clientX, shift0: S.shift[1] || 0, moved: false };
  canvas.classList.add('dragging');
  return true;
}

// alignDragMove moves B with the pointer while alt+dragging.
function alignDragMove(ev) {
  const dx = ev.clientX - drag.x;
  if (Math.abs(dx) > 2) drag.moved = true;
  S.shift[1] = Math.round(drag.shift0 + dx * (S.t1 - S.t0) / plotWidth());
  alignInfo();
  requestDraw();
}

// alignDragEnd keeps where B was dropped.
function alignDragEnd(d) {
  if (d.moved) alignShift(S.shift[1], 'drag', 'by hand');
  else S.shift[1] = d.shift0;
}
