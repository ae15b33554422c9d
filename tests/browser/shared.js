// One tab of tests/sse/shared.chromium.test.mjs: an EventSource with
// `shared: true` on the stream in ?url=…, recording the IDs it hears.
import { EventSource } from '/pkg/sse/index.js';

const url = new URL(location.href).searchParams.get('url');
const es = new EventSource(url, { shared: true, baseMs: 20 });
window.ids = [];
window.errors = [];
window.state = () => es.readyState;
es.onmessage = (e) => window.ids.push(Number(e.lastEventId));
es.onerror = (e) => window.errors.push(e.message);
document.getElementById('status').textContent = 'started';
document.body.dataset.started = '1';
