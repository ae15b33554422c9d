// @ts-check
// `#fleet` outside workerd: nothing (GateObject and sharedGate are in the
// workerd build of `wasm-backoff/gate` only; a browser downloads none of it).
export {};
