// What the build provides to js/ (scripts/bundle.mjs): the module's file
// name as a literal, and the two special imports of the loaders.

/** The .wasm file of the module being built, e.g. './wasm_backoff_bg.wasm'. */
declare const WASM: string;

declare module '#wasm' {
  /** The module compiled by the host (workerd's CompiledWasm rule). */
  const module: WebAssembly.Module;
  export default module;
}

declare module '#wasm-hex' {
  /** The module's bytes in hexadecimal (the bundler form inlines them). */
  const hex: string;
  export default hex;
}

declare module 'node:fs' {
  /** (the one function the Node loader uses; no @types/node needed) */
  export function readFileSync(path: URL): Uint8Array<ArrayBuffer>;
}

declare module 'cloudflare:workers' {
  /** workerd's base class of Durable Objects (js/queue/queue-object.js, workerd build only). */
  // biome-ignore-start lint/suspicious/noExplicitAny: workerd's state and bindings, typed by @cloudflare/workers-types, which js/ does not load
  export class DurableObject {
    constructor(ctx: any, env: any);
    ctx: any;
    env: any;
  }
  // biome-ignore-end lint/suspicious/noExplicitAny: (above)
}
