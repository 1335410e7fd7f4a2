// format.js: the page's formatting helpers (times, shares, stretch factors, gains, MPS states)
// and small DOM builders. Pure functions of their arguments: no view state. Loaded first.
'use strict';

// fmtTime formats a duration in ns with a unit that suits it.
function fmtTime(ns, digits = 3) {
  const a = Math.abs(ns);
  if (a < 1e3) return `${+ns.toFixed(0)} ns`;
  if (a < 1e6) return `${+(ns / 1e3).toPrecision(digits)} µs`;
  if (a < 1e9) return `${+(ns / 1e6).toPrecision(digits)} ms`;
  return `${+(ns / 1e9).toPrecision(digits + 1)} s`;
}

// runLetter names run ri as the page and the exports do: A, B, ..., Z, then AA, AB, ... (an
// experiment shows up to 64 runs).
function runLetter(ri) {
  return ri < 26 ? String.fromCharCode(65 + ri) : String.fromCharCode(64 + Math.floor(ri / 26), 65 + ri % 26);
}

// fmtPct formats a share 0..1.
function fmtPct(x) {
  return x == null || !isFinite(x) ? '–' : `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;
}

// fmtX formats a stretch or gain factor.
function fmtX(x) {
  return x == null || !isFinite(x) ? '–' : `×${x.toFixed(2)}`;
}

// esc escapes text for innerHTML.
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// shortName drops the argument list of a demangled name, for labels on bars.
function shortName(n) {
  const i = n.indexOf('(');
  return i > 0 ? n.slice(0, i) : n;
}

// midChars shortens text to at most n characters by cutting its middle (a third kept from the
// head, the rest from the tail), so that labels which differ at their end stay apart.
function midChars(text, n) {
  if (text.length <= n) return text;
  const head = Math.ceil((n - 1) / 3);
  return `${text.slice(0, head)}…${text.slice(text.length - (n - 1 - head))}`;
}

// el builds an element with a class and text.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

// swatch is a small coloured box (the colour set through the CSSOM, which the CSP allows).
function swatch(color) {
  const s = el('span', 'sw');
  s.style.background = color;
  return s;
}

// fmtStretch is a stretch with its basis: "2.14×" measured, "~4.00× (estimate: turns)".
function fmtStretch(v, basis) {
  if (v == null || basis === 'none') return '–';
  if (basis === 'reference') return fmtX(v);
  return `~${fmtX(v)} (estimate: ${basis === 'turns' ? 'contexts taking turns' : 'shortest run as solo time'})`;
}

// gText writes v with p significant digits as C's printf("%.{p}g") does (0.013, 1.2e-05, 2),
// the way the reports write p-values and gains.
function gText(v, p) {
  if (v === 0) return '0';
  const [m, ex] = v.toExponential(p - 1).split('e');
  const x = +ex;
  if (x < -4 || x >= p) return `${m.replace(/\.?0+$/, '')}e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`;
  return v.toFixed(Math.max(0, p - 1 - x)).replace(/\.0+$|(\.\d*?)0+$/, '$1');
}

// gainText writes a predicted gain's interval as `tlview report` does (view_gain_text): "0.775-1.43x",
// "2x" when both ends agree to 3 digits, `none` when it is not defined ('-', as advise's text; the
// timeline's panels pass '–', their mark for a figure that has no value).
function gainText(lo, hi, none = '-') {
  if (lo == null || hi == null) return none;
  const l = gText(lo, 3), h = gText(hi, 3);
  return l === h ? `${h}x` : `${l}-${h}x`;
}

// mpsText words a device's or process's MPS state.
function mpsText(m) {
  return { off: 'no MPS', on: 'MPS', mixed: 'MPS for some', unknown: 'MPS unknown' }[m] || m;
}

// rankText is a process's rank as the text report's rank column writes it ("3 of 8, local 1":
// the launcher's variables, view/README.md processes[]), '' when it is not known.
function rankText(p) {
  if (p.rank == null) return '';
  return `${p.rank}${p.world_size != null ? ` of ${p.world_size}` : ''}${p.local_rank != null ? `, local ${p.local_rank}` : ''}`;
}

// pidText is a process's short label: "pid 4100", "pid 4100 · rank 3" when its rank is known.
function pidText(p) {
  return `pid ${p.pid}${p.rank != null ? ` · rank ${p.rank}` : ''}`;
}

// fmtCount writes a count with its thousands grouped: "20,016" (as en-US: one form on every
// machine, as the report's text has one; and no Number.toLocaleString, whose first call loads the
// browser's locale data, ~40 ms of the first paint).
function fmtCount(n) {
  if (!Number.isFinite(n)) return String(n);
  const s = String(Math.round(Math.abs(n)));
  const out = s.length > 3 && s.indexOf('e') < 0 ? s.replace(/\B(?=(\d{3})+$)/g, ',') : s;
  return n < 0 && Math.round(n) !== 0 ? `-${out}` : out;
}

// plural writes a count with its noun: "1 process", "4 processes", "20,016 kernels".
function plural(n, one, many) {
  return `${fmtCount(n)} ${n === 1 ? one : many}`;
}
