// jobgroup.js: the timeline page as one GPU group of a job (`tlview serve --job`): served at
// /g/N/, its API under /g/N/api/ (so every query of the page names the group without a
// parameter). Before the page reads its runs, jobOpen() asks the server to load the group (GET
// /api/job/open) and waits for it; jobHeader() adds the way back to the job's overview. Outside a
// job (a plain `tlview serve`) both do nothing.
'use strict';

// ------------------------------------------------------------------ constants

const JOB_GROUP = (() => { // the group of this page, or null outside a job
  const m = /\/g\/(\d+)\/(?:index\.html)?$/.exec(location.pathname);
  return m ? +m[1] : null;
})();
const JOB_OPEN_POLL = 300; // ms between two looks at a group being loaded
const JOB_HELD_POLL = 2000; // ms between two looks that the group is still held

// jobOpen asks for this page's group and waits until the server holds it (its loading said in
// the status line). Throws with the server's reason when it cannot be opened.
async function jobOpen() {
  if (JOB_GROUP == null) return;
  const url = new URL(`../../api/job/open?group=${JOB_GROUP}`, location.href);
  for (;;) {
    const r = await apiFetch(url);
    const j = await r.json();
    if (r.status === 404) throw jobMissing(j.error);
    if (!r.ok) throw new Error(j.error || `${r.status}`);
    if (j.state === 'open') return;
    if (j.state === 'failed') throw new Error(`group ${JOB_GROUP} cannot be opened: ${j.failure}`);
    $('status').textContent = `Loading GPU group ${JOB_GROUP} (${j.state})…`;
    await new Promise((ok) => setTimeout(ok, JOB_OPEN_POLL));
  }
}

// jobMissing shows, instead of the timeline, that the job has no such group (the server's words)
// and the way back to the overview; returns the error for jobOpen to throw (already shown).
function jobMissing(why) {
  const box = $('loading');
  box.textContent = '';
  const back = el('a', null, '◀ Back to the job: every host and GPU');
  back.href = '../../';
  back.id = 'job-back';
  box.append(el('div', 'load-title', `No GPU group ${JOB_GROUP} here`), el('div', 'load-stage', why || ''), back);
  box.hidden = false;
  document.body.classList.add('is-loading');
  const e = new Error(why);
  e.shown = true;
  return e;
}

// jobHeader puts the link back to the overview first in the header, and looks every few seconds
// that the server still holds the group (it keeps the last few opened): when it let it go, says
// so and offers to load it again.
function jobHeader() {
  if (JOB_GROUP == null) return;
  const a = el('a', 'chip back', '◀ Job');
  a.href = `../../#group=${JOB_GROUP}`;
  a.title = 'Back to the job: every host and GPU';
  a.id = 'job-back';
  $('runinfo').prepend(a);
  const timer = setInterval(async () => {
    try {
      const r = await apiFetch('api/generation');
      if (r.status !== 404) return;
      clearInterval(timer);
      const e = $('error');
      e.textContent = `The server let GPU group ${JOB_GROUP} go to make room for others: reload the page to load it again.`;
      e.hidden = false;
    } catch (e) {
      // the server may be stopping: look again later
    }
  }, JOB_HELD_POLL);
}
