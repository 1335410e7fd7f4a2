// colors.js: the page's colours: verdicts (fixed), processes (a palette kept apart from the
// verdict colours that stays distinct past ten processes), stretch (a ramp for the histogram), and
// the derived shades the canvas uses (dimmed for find, light for the stretched part of a kernel).
'use strict';

const VERDICT_COLORS = { // by verdict name (GET /api/runs "verdicts")
  idle: '#d9dde3', solo: '#8d99ab', concurrent: '#2e9e4f', 'time-sliced': '#d64541',
  contended: '#f08c00', queued: '#1f8fb3', unknown: '#8e6cc4',
};
// The hues processes may take (degrees): gold to yellow-green, cyan to teal, violet to pink: the
// whole of what the red, orange, green, blue and purple families of the verdicts and the
// concurrency track leave (widened for issue 31: 16 processes pairwise ΔE > 28, was 24).
const PROCESS_HUES = [[40, 85], [160, 190], [275, 340]];
const PROCESS_MIN_DE = 24; // a process colour is at least this far (CIE76 ΔE) from every verdict's
const PAR_COLOR = '#2b3140';  // effective parallelism in the lane's track
const CONC_COLOR = '#2f6fd0'; // processes in flight (area at 28%, peak line darker)
const CAPTURE_COLOR = '#0f6e69'; // captured ranges, along the bottom of a lane's header
const TURN_COLOR = '#b8322e'; // a took-turns window's handovers (context switches), darker than time-sliced

// verdictColor is the colour of verdict v (an index of S.verdicts).
function verdictColor(v) {
  return VERDICT_COLORS[S.verdicts[v]] || '#999';
}

// verdictPixels is each verdict's colour as a pixel of the layer (rgba32), by verdict value: as
// it is (shade 0), dimmed (1: not a find's match) or light (2: a kernel's stretched part). Made
// once, so that drawing a kernel or a pixel looks up no string.
const verdictPx = [null, null, null];
function verdictPixels(shade) {
  if (!verdictPx[shade] || verdictPx[shade].length !== S.verdicts.length) {
    const f = [(c) => c, dim, light][shade];
    verdictPx[shade] = S.verdicts.map((_, v) => rgba32(f(verdictColor(v))));
  }
  return verdictPx[shade];
}

// hexRgb reads '#rrggbb' as [r, g, b].
function hexRgb(c) {
  const n = parseInt(c.slice(1), 16);
  return [n >> 16, (n >> 8) & 255, n & 255];
}

// rgbHex writes [r, g, b] (0..255) as '#rrggbb'.
function rgbHex(rgb) {
  return `#${rgb.map((v) => Math.round(Math.min(255, Math.max(0, v))).toString(16).padStart(2, '0')).join('')}`;
}

// hslHex turns hue (degrees), saturation and lightness (0..1) into '#rrggbb'.
function hslHex(h, s, l) {
  const a = s * Math.min(l, 1 - l);
  const f = (n) => { const k = (n + h / 30) % 12; return 255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))); };
  return rgbHex([f(0), f(8), f(4)]);
}

// lab turns '#rrggbb' into CIE L*a*b* (D65), for colour distances.
function lab(c) {
  const [r, g, b] = hexRgb(c).map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

// deltaE is the CIE76 distance of two '#rrggbb' colours (about 2.3: just noticeable).
function deltaE(a, b) {
  const p = lab(a), q = lab(b);
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

// growPalette grows the process colours (processPalette) to at least n: candidates over PROCESS_HUES at six
// lightnesses and two saturations, those near a verdict colour dropped, then picked greedily,
// each the candidate farthest (in L*a*b*) from all picked before, starting from a mid violet
// (the first candidate when the verdicts' distance leaves it out).
// Deterministic; ~700 candidates, so even 64 processes cost well under a millisecond each.
const processPalette = { colors: [], cands: null, labs: null, far: null };
function growPalette(n) {
  const P = processPalette;
  if (!P.cands) {
    const verdictLabs = Object.values(VERDICT_COLORS).concat([CONC_COLOR, PAR_COLOR]);
    P.cands = [];
    for (const [h0, h1] of PROCESS_HUES) {
      for (let h = h0; h <= h1; h += 2) {
        for (const l of [0.28, 0.36, 0.44, 0.52, 0.60, 0.68]) {
          for (const s of [0.45, 0.7]) {
            const c = hslHex(h, s, l);
            if (verdictLabs.every((v) => deltaE(c, v) >= PROCESS_MIN_DE)) P.cands.push(c);
          }
        }
      }
    }
    P.labs = P.cands.map(lab);
    P.far = new Float64Array(P.cands.length).fill(Infinity);
  }
  while (P.colors.length < n) {
    let k = 0;
    if (!P.colors.length) k = Math.max(0, P.cands.indexOf(hslHex(300, 0.45, 0.44)));
    else for (let i = 1; i < P.far.length; i++) if (P.far[i] > P.far[k]) k = i;
    const c = P.cands[k], q = P.labs[k];
    P.colors.push(c);
    for (let i = 0; i < P.far.length; i++) {
      const p = P.labs[i];
      P.far[i] = Math.min(P.far[i], Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]));
    }
  }
}

// processColor is the colour of process p (an index of a run's processes): the same index gets
// the same colour in both runs of a comparison.
function processColor(run, p) {
  if (p >= processPalette.colors.length) growPalette(p + 1);
  return processPalette.colors[p];
}

// stretchColor colours a stretch factor for the histogram: neutral grey at or below 1 (solo
// speed), then a light-to-dark plum ramp on a log scale, darkest from 8× on.
function stretchColor(x) {
  if (!(x > 1)) return '#b4bcc8';
  const t = Math.min(1, Math.log2(x) / 3);
  const a = [233, 214, 229], b = [96, 26, 84];
  return rgbHex(a.map((v, i) => v + (b[i] - v) * t));
}

// inkOn is the text colour readable on a bar of colour c: white on dark colours, ink on light.
const inkCache = new Map();
function inkOn(c) {
  let v = inkCache.get(c);
  if (!v) {
    v = lab(c)[0] > 62 ? '#1d2430' : '#fff';
    inkCache.set(c, v);
  }
  return v;
}

const rgbaCache = new Map();
// rgba32 turns '#rrggbb' or 'rgb(r,g,b)' into a little-endian ABGR pixel.
function rgba32(c) {
  let v = rgbaCache.get(c);
  if (v === undefined) {
    let r, g, b;
    if (c[0] === '#') {
      const n = parseInt(c.slice(1), 16);
      r = n >> 16; g = (n >> 8) & 255; b = n & 255;
    } else {
      [r, g, b] = c.match(/\d+/g).map(Number);
    }
    v = ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
    rgbaCache.set(c, v);
  }
  return v;
}

const dimCache = new Map();
// dim returns a washed-out version of a colour, for kernels that do not match the find.
function dim(c) {
  let d = dimCache.get(c);
  if (!d) {
    const n = parseInt(c.slice(1), 16);
    const m = (v) => Math.round(v + (255 - v) * 0.72);
    d = `rgb(${m(n >> 16)},${m((n >> 8) & 255)},${m(n & 255)})`;
    dimCache.set(c, d);
  }
  return d;
}

const lightCache = new Map();
// light returns the pale version of a colour that fills the stretched part of a kernel (between
// its stripes): lighter than the kernel, darker than dim().
function light(c) {
  let d = lightCache.get(c);
  if (!d) {
    d = rgbHex(hexRgb(c).map((v) => v + (255 - v) * 0.55));
    lightCache.set(c, d);
  }
  return d;
}
