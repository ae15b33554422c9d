// Runs the smokes of one feature around the retry (?feature=auth, dedupe,
// cache or quota: tests/<feature>/<feature>-checks.mjs) in this page, with
// the package as a page imports it, against the scripted server whose URL
// is in ?a=… (another origin: CORS, and Authorization's preflight).
import * as main from '/pkg/index.js';
import * as auth from '/pkg/auth/index.js';
import * as dedupe from '/pkg/dedupe/index.js';
import * as cache from '/pkg/cache/index.js';
import * as quota from '/pkg/quota/index.js';
import { control } from '/tests/fetch/fetch-checks.mjs';
import { authSmokes } from '/tests/auth/auth-checks.mjs';
import { dedupeSmokes } from '/tests/dedupe/dedupe-checks.mjs';
import { cacheSmokes } from '/tests/cache/cache-checks.mjs';
import { quotaSmokes } from '/tests/quota/quota-checks.mjs';

const q = new URL(location.href).searchParams;
const smokes = { auth: authSmokes, dedupe: dedupeSmokes, cache: cacheSmokes, quota: quotaSmokes }[q.get('feature')];
window.results = smokes
  ? await smokes({ ...main, ...auth, ...dedupe, ...cache, ...quota }, control(q.get('a')))
  : [`no feature ${q.get('feature')}`];
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
