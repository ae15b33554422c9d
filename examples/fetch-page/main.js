// Instantiates the page's wasm module (built by scripts/example.sh into
// pkg/); its start function does the rest.
import init from './pkg/fetch_page.js';

await init();
