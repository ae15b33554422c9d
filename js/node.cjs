// CommonJS entry: Node >= 20.19 loads the synchronous ESM entry with
// require(esm); one module instance is shared with `import`.
'use strict';
module.exports = require('./node.mjs');
