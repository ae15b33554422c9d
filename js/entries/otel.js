// @ts-check
// `wasm-backoff/otel`: OpenTelemetry spans and metrics for the fetch driver
// and retry(fn) (plain JavaScript: no wasm module; `@opentelemetry/api` is a
// peer dependency, imported, never bundled).
export { instrument } from '../otel/index.js';
