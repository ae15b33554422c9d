/**
 * `EventSource`: Server-Sent Events on `fetch`, reconnecting on the package's schedule, one connection for many tabs.
 *
 * A drop-in for the WHATWG `EventSource` (`readyState`, `url`,
 * `withCredentials`, `open`/`message`/`error` and named events, the `on…`
 * handlers, `close()`) that runs wherever `fetch` does: pages, workers,
 * Cloudflare Workers, Deno, Bun, Node 20. It takes what the native one
 * cannot (headers, a method and a body, a custom `fetch`, a signal, a gate,
 * the package's backoff options), and its reconnects never storm: each
 * wait is drawn with jitter, the server's `retry:` as its base rather than
 * a fixed delay; a 429 or 503 naming a wait (`Retry-After` and the other
 * headers of the fetch driver) is waited; a 5xx or a network failure backs
 * off; a 204 ends the stream; any other answer fails it with an `error`
 * event that says why. The small module.
 * @module wasm-backoff/sse
 */
import type { BackoffOptions } from '../index.js';
import type { Gate } from '../gate/index.js';
export { BackoffOptions, Preset, Strategy, Jitter } from '../index.js';

/**
 * The options of {@link EventSource}: the request's, the schedule's
 * ({@link BackoffOptions}), and the stream's. Checked by the constructor: a
 * wrong type throws `TypeError`, a value out of range `RangeError`, the
 * message starting with the option's name.
 *
 * The schedule: the wait before each reconnect is drawn by the package's
 * calculator (exponential, full jitter by default), on the server's
 * `retry:` as its base once it named one, else on `baseMs`. A reconnect
 * starts a fresh schedule each time a connection opened; the lost
 * connection counts as its first try (`maxAttempts` tries in a row without
 * an open connection, the one that dropped included).
 */
export interface EventSourceOptions extends Omit<BackoffOptions, 'maxElapsedMs' | 'maxAttempts' | 'baseMs' | 'maxDelayMs'> {
  /** Send cookies and credentials cross-origin (the standard's `withCredentials`). @default false */
  withCredentials?: boolean;
  /** The request's method (a token; `POST` with a `body` for a stream that takes a query). @default 'GET' */
  method?: string;
  /** The request's headers (`Accept: text/event-stream` unless given; `Last-Event-ID` on reconnects is the stream's own). @default undefined (none) */
  headers?: HeadersInit;
  /** The request's body, sent again at each reconnect: a string, bytes, `Blob`, `FormData` or `URLSearchParams` (not a stream). @default undefined (none) */
  body?: BodyInit | null;
  /** The `fetch` to use (a test's `scriptedFetch`, an instrumented one). @default globalThis.fetch (read at each attempt) */
  fetch?: typeof fetch;
  /** Aborting it is `close()`. @default undefined */
  signal?: AbortSignal | null;
  /**
   * A gate (`createGate` from `wasm-backoff/gate`) the stream's connection
   * attempts go through, as the page's fetches do: it hears every failed
   * attempt, and while its circuit is open it holds the reconnects too.
   * @default undefined (the reconnects back off on their own)
   */
  gate?: Gate;
  /**
   * One connection for every tab of the origin (browsers: Web Locks and
   * BroadcastChannel): the tabs opening the same stream (URL, method,
   * credentials) elect one holder, which connects and tells every event to
   * the others; when its tab closes, the next takes over within a second,
   * resuming from the last event ID. Where there is no Web Locks (Node,
   * Deno, workerd), the stream has its own connection. @default false
   */
  shared?: boolean;
  /** The base of the waits until the server names a `retry:`, ms (>= 0). @default 3000 (the preset's when it sets one) */
  baseMs?: number;
  /** The cap of one wait, ms. @default 30000, or `baseMs` when it is larger (the preset's when it sets one) */
  maxDelayMs?: number;
  /** Tries in a row without an open connection, the lost one included, before the stream is closed for good. @default Infinity */
  maxAttempts?: number;
  /** The longest one reconnect may take, ms (waits and attempts; an attempt running then is aborted): then it is closed for good. @default Infinity */
  maxElapsedMs?: number;
  /** A server-named wait longer than this (ms) is not waited for: the stream is closed for good. @default 60000 */
  maxRetryAfterMs?: number;
  /** Statuses reconnected after, each an integer in [100, 599] (429 and 503 also whenever the server names a wait). @default [408, 429, 500, 502, 503, 504, 521, 522, 529] */
  retryOn?: number[];
}

/** The `error` event: why, and whether (and when) the stream tries again. */
export interface EventSourceErrorEvent extends Event {
  /** What happened, in words ("the server answered 503: reconnecting in 2140 ms"). */
  readonly message: string;
  /** The failure (a network error, the stream's end), if any. */
  readonly error?: unknown;
  /** The status the server answered, if it answered. */
  readonly status?: number;
  /** The wait before the next try, ms; absent when the stream is closed for good (`readyState` 2). */
  readonly delayMs?: number;
}

/** The events an EventSource dispatches, by type (what `addEventListener` types its listener by). */
export interface EventSourceEventMap {
  open: Event;
  message: MessageEvent<string>;
  error: EventSourceErrorEvent;
}

/**
 * Server-Sent Events, reconnecting on the package's schedule. The
 * connection starts at once; events are `MessageEvent`s (`data`,
 * `lastEventId`, `origin`), named by the stream's `event:` field
 * (`message` by default).
 */
export class EventSource extends EventTarget {
  /**
   * @param url resolved against the page's location where there is one; an invalid URL throws a `SyntaxError` DOMException
   * @param options see {@link EventSourceOptions}
   */
  constructor(url: string | URL, options?: EventSourceOptions);
  static readonly CONNECTING: 0;
  static readonly OPEN: 1;
  static readonly CLOSED: 2;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSED: 2;
  /** The stream's absolute URL. */
  readonly url: string;
  readonly withCredentials: boolean;
  /** 0 connecting (or waiting to reconnect), 1 open, 2 closed for good. */
  readonly readyState: 0 | 1 | 2;
  onopen: ((this: EventSource, ev: Event) => any) | null;
  onmessage: ((this: EventSource, ev: MessageEvent<string>) => any) | null;
  onerror: ((this: EventSource, ev: EventSourceErrorEvent) => any) | null;
  /** Closes the stream: no event, request or timer after it. */
  close(): void;
  addEventListener<K extends keyof EventSourceEventMap>(
    type: K,
    listener: (this: EventSource, ev: EventSourceEventMap[K]) => any,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof EventSourceEventMap>(
    type: K,
    listener: (this: EventSource, ev: EventSourceEventMap[K]) => any,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}
