// harness.js: what every browser test shares: playwright-core from the build folder, Chromium's
// flags, check() with its failure count, and start() of a server that prints its URL.
'use strict';
const { spawn } = require('child_process');
const path = require('path');

const DIR = process.env.TLVIEW_BROWSER_DIR;
const { chromium } = require(path.join(DIR, 'node_modules', 'playwright-core'));
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const state = { failures: 0 };

// check prints one line per expectation and counts the failed ones (state.failures).
function check(cond, what) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  if (!cond) state.failures++;
}

// start runs TLVIEW_FIXTURE with args and resolves to { proc, url } once it prints its URL;
// `who` names it in the errors.
function start(args, who) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.env.TLVIEW_FIXTURE, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b) => {
      out += b;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve({ proc: p, url: m[1] });
    });
    p.on('exit', (code) => reject(new Error(`${who} exited with ${code}`)));
    setTimeout(() => reject(new Error(`${who} did not print its URL`)), 30000);
  });
}

module.exports = { DIR, chromium, FLAGS, state, check, start };
