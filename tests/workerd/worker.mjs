// A Cloudflare Worker (run by miniflare's real workerd) that imports the
// package's workerd entry and answers with the shared checks' results.
import { Backoff } from '../../pkg/workerd.js';
import { goldenFailures, validationFailures, semanticsFailures } from '../package/checks.mjs';
import goldenText from '../../core/tests/golden/seeded.json';

const golden = JSON.parse(goldenText);

export default {
  async fetch() {
    return Response.json({
      golden: goldenFailures(Backoff, golden),
      validation: validationFailures(Backoff),
      semantics: semanticsFailures(Backoff),
      first: new Backoff({ preset: 'flume' }).next(),
    });
  },
};
