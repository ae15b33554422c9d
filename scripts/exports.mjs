// The raw exports of a wasm module as a TypeScript declaration, read from
// the binary (its type, import, function and export sections): what
// js/load/instantiate.js returns, checked by tsc (`#exports`,
// js/load/exports.d.ts). Every export of ours takes and returns numbers
// (f64, i32), so each is `(a: number, …) => number | void`; the memory is
// a WebAssembly.Memory.
//
//   node scripts/exports.mjs <module.wasm>     prints the declaration
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The declaration of `bytes`'s exports (functions and the memory), in the
 * module's export order.
 * @param {Uint8Array} bytes
 */
export function declare(bytes) {
  let at = 8; // (magic and version)
  const u32 = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[at++];
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
  };
  const name = () => {
    const n = u32();
    const s = new TextDecoder().decode(bytes.subarray(at, at + n));
    at += n;
    return s;
  };
  /** @type {[number, number][]} each type's [params, results] */
  const types = [];
  /** @type {number[]} each function's type (imports first) */
  const funcs = [];
  /** @type {[string, number, number][]} [name, kind, index] */
  const exports = [];
  while (at < bytes.length) {
    const id = bytes[at++];
    const end = u32() + at;
    if (id === 1) {
      for (let n = u32(); n--; ) {
        at++; // (0x60: a function type)
        const params = u32();
        at += params;
        const results = u32();
        at += results;
        types.push([params, results]);
      }
    } else if (id === 2) {
      for (let n = u32(); n--; ) {
        name(), name();
        const kind = bytes[at++];
        if (kind === 0) funcs.push(u32());
        else throw new Error(`an import of kind ${kind}: the module should import no memory, table or global`);
      }
    } else if (id === 3) {
      for (let n = u32(); n--; ) funcs.push(u32());
    } else if (id === 7) {
      for (let n = u32(); n--; ) exports.push([name(), bytes[at++], u32()]);
    }
    at = end;
  }
  const lines = ['/* tslint:disable */', '/* eslint-disable */'];
  for (const [n, kind, i] of exports) {
    if (kind === 2) lines.push(`export const ${n}: WebAssembly.Memory;`);
    if (kind !== 0) continue;
    const [params, results] = types[funcs[i]];
    const args = Array.from({ length: params }, (_, k) => `${String.fromCharCode(97 + k)}: number`).join(', ');
    lines.push(`export const ${n}: (${args}) => ${results ? 'number' : 'void'};`);
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(declare(readFileSync(process.argv[2])));
