// A server-side TypeScript consumer WITHOUT the DOM lib: a Node project
// (lib es2022 + @types/node, as @tsconfig/node20 sets it up) or a Cloudflare
// Workers project (lib es2022 + @cloudflare/workers-types). It uses only the
// globals both have (fetch, Request, Response, URL, AbortSignal), and must
// compile with `tsc --strict --noEmit` in each, also with skipLibCheck.
import { Backoff, fetchWithBackoff, withBackoff, type RetryOptions } from 'wasm-backoff';
import { RetryBudget } from 'wasm-backoff/budget';
import { Backoff as SmallBackoff } from 'wasm-backoff/backoff';

const options: RetryOptions = { preset: 'aws', timeoutMs: 5_000, budget: new RetryBudget(), onDone: (info) => console.log(info.reason) };

export async function main(signal: AbortSignal): Promise<number> {
  const r1: Response = await fetchWithBackoff('https://example.test/items', { signal }, options);
  const r2: Response = await fetchWithBackoff(new URL('https://example.test/items'));
  const r3: Response = await fetchWithBackoff(new Request('https://example.test/items', { method: 'PUT', body: '{}' }));
  const retrying = withBackoff(fetch, { maxAttempts: 3 });
  const r4: Response = await retrying('https://example.test/x', { method: 'POST', headers: { 'Idempotency-Key': 'k' } });
  // The input is typed, not `any`:
  // @ts-expect-error a number is not a request
  await fetchWithBackoff(42);
  // @ts-expect-error a number is not a request
  await retrying(42);
  const delay: number | undefined = new Backoff({ preset: 'gcs' }).next() ?? new SmallBackoff().next();
  return r1.status + r2.status + r3.status + r4.status + (delay ?? 0);
}
