// harness.js: what every browser test shares: playwright-core from the build folder, Chromium's
// flags, check() with its failure count, start() of a server that prints its URL (with the token
// it requires) and checkToken() of the page loaded with it.
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

// start runs TLVIEW_FIXTURE with args and resolves to { proc, url, open } once it prints its URL,
// http://127.0.0.1:PORT/?token=TOKEN: url is the server's root (every request of the page starts
// with it), open the URL to load (with the token; the page's own requests then carry its cookie);
// `who` names it in the errors.
function start(args, who) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.env.TLVIEW_FIXTURE, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b) => {
      out += b;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)(\?token=[0-9a-f]{48})\s/.exec(out);
      if (m) resolve({ proc: p, url: m[1], open: m[1] + m[2] });
    });
    p.on('exit', (code) => reject(new Error(`${who} exited with ${code}`)));
    setTimeout(() => reject(new Error(`${who} did not print its URL`)), 30000);
  });
}

// checkToken checks, on the page loaded from server.open, that its own requests carry the token
// (the cookie set by the first load: `api`, a path of the API, answered 200), and that from
// outside the browser (as another user of the machine) the page, the API and an asset are refused
// without it (403) and answered with it.
async function checkToken(page, server, api) {
  const cookie = await page.evaluate(async (p) => (await fetch(p)).status, server.url + api);
  const token = new URL(server.open).searchParams.get('token');
  const none = [], bearer = [];
  for (const p of ['', api, 'main.js']) {
    none.push((await fetch(server.url + p)).status);
    bearer.push((await fetch(server.url + p, { headers: { Authorization: `Bearer ${token}` } })).status);
  }
  check(cookie === 200 && none.every((s) => s === 403) && bearer.every((s) => s === 200),
    `the page's requests carry the token (${api}: ${cookie}); the page, ${api} and main.js without it ${none.join(' ')}, with it ${bearer.join(' ')}`);
}

module.exports = { DIR, chromium, FLAGS, state, check, start, checkToken };
