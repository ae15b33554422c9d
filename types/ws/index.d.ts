/**
 * `WebSocket`: a reconnecting WebSocket with the standard interface, a bounded send queue and jittered backoff.
 *
 * `new WebSocket(url, protocols?, options?)` (options third, as
 * partysocket): `send`, `close(code, reason)`, `readyState`, `binaryType`,
 * `bufferedAmount`, `protocol`, `extensions`, the `open`, `message`,
 * `close` and `error` events and their `on…` handlers. When the connection
 * drops it reconnects after a wait drawn by the package's calculator
 * (exponential, full jitter), unless the server closed it with a code of
 * `stopCodes` (1008 by default) or the caller closed it. Each drop fires
 * `close` (then `readyState` is 0 while it reconnects, 3 when it is over);
 * each connection that opens fires `open`. Messages sent while it is not
 * open wait, in order, in a bounded queue. The small module.
 * @module wasm-backoff/ws
 */
import type { BackoffOptions } from '../index.js';
import type { Gate } from '../gate/index.js';
export { BackoffOptions, Preset, Strategy, Jitter } from '../index.js';

/** The standard constructor's shape: the runtime's `WebSocket`, or the `ws` package's (Node 20). */
export type WebSocketClass = new (url: string, protocols?: string | string[]) => any;

/**
 * The options of {@link WebSocket}: the socket's and the schedule's
 * ({@link BackoffOptions}). Checked by the constructor: a wrong type throws
 * `TypeError`, a value out of range `RangeError`, the message starting
 * with the option's name. A reconnect starts a fresh schedule each time a
 * connection opened; the lost connection counts as its first try.
 */
export interface WebSocketOptions extends Omit<BackoffOptions, 'maxElapsedMs' | 'maxAttempts' | 'baseMs' | 'maxDelayMs'> {
  /** The implementation. @default globalThis.WebSocket (Node 20 has none: pass `ws`'s `WebSocket`) */
  WebSocket?: WebSocketClass;
  /** Messages kept while not open (an integer >= 0); they go in order when a connection opens. @default 16 */
  maxQueued?: number;
  /** A message past `maxQueued`: `send()` throws a `RangeError` (`'throw'`), or it is dropped with an `error` event whose `dropped` is it (`'error'`). @default 'throw' */
  overflow?: 'throw' | 'error';
  /** Close codes (integers in [1000, 4999]) that end the socket for good, with no reconnect: the server's "do not come back". @default [1008] */
  stopCodes?: number[];
  /** The most ms an opening handshake may take: then it is abandoned and retried. @default 10000 */
  timeoutMs?: number;
  /** Aborting it is `close()`. @default undefined */
  signal?: AbortSignal | null;
  /** A gate (`createGate` from `wasm-backoff/gate`) the connection attempts go through: it hears every failed one, and holds them while its circuit is open. @default undefined (the reconnects back off on their own) */
  gate?: Gate;
  /** The base of the waits, ms (>= 0). @default 1000 (the preset's when it sets one) */
  baseMs?: number;
  /** The cap of one wait, ms. @default 30000, or `baseMs` when it is larger (the preset's when it sets one) */
  maxDelayMs?: number;
  /** Tries in a row without an open connection, the lost one included, before the socket is closed for good. @default Infinity */
  maxAttempts?: number;
  /** The longest one reconnect may take, ms: then it is closed for good. @default Infinity */
  maxElapsedMs?: number;
  /** Statuses a refused handshake is retried after, where the implementation tells the status (`ws`). @default [408, 429, 500, 502, 503, 504, 521, 522, 529] */
  retryOn?: number[];
}

/** An `error` event: a failed attempt (with `delayMs`), the end (without), or a message dropped (`dropped`). */
export interface WebSocketErrorEvent extends Event {
  readonly message: string;
  readonly error?: unknown;
  /** The status a refused handshake named, where the implementation tells it. */
  readonly status?: number;
  /** The wait before the next try, ms; absent when the socket is closed for good. */
  readonly delayMs?: number;
  /** The message not sent (`overflow: 'error'`). */
  readonly dropped?: unknown;
}

/** A `close` event (a `CloseEvent` where the runtime has one). */
export interface WebSocketCloseEvent extends Event {
  readonly code: number;
  readonly reason: string;
  readonly wasClean: boolean;
}

/** The events a WebSocket dispatches, by type (what `addEventListener` types its listener by). */
export interface WebSocketEventMap {
  open: Event;
  message: MessageEvent;
  close: WebSocketCloseEvent;
  error: WebSocketErrorEvent;
}

/** A WebSocket that reconnects; see the module's description. */
export class WebSocket extends EventTarget {
  /**
   * @param url `ws:`, `wss:` (or `http:`/`https:`, turned into those), resolved against the page's location; else a `SyntaxError` DOMException
   * @param protocols the subprotocols asked for at each connection
   * @param options see {@link WebSocketOptions}
   */
  constructor(url: string | URL, protocols?: string | string[], options?: WebSocketOptions);
  static readonly CONNECTING: 0;
  static readonly OPEN: 1;
  static readonly CLOSING: 2;
  static readonly CLOSED: 3;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSING: 2;
  readonly CLOSED: 3;
  readonly url: string;
  /** 0 connecting (or waiting to reconnect), 1 open, 2 closing, 3 closed for good. */
  readonly readyState: 0 | 1 | 2 | 3;
  /** The open connection's subprotocol ('' when none). */
  readonly protocol: string;
  readonly extensions: string;
  /** Bytes the open connection has not sent yet, plus those queued while not open. */
  readonly bufferedAmount: number;
  binaryType: 'blob' | 'arraybuffer';
  onopen: ((this: WebSocket, ev: Event) => any) | null;
  onmessage: ((this: WebSocket, ev: MessageEvent) => any) | null;
  onclose: ((this: WebSocket, ev: WebSocketCloseEvent) => any) | null;
  onerror: ((this: WebSocket, ev: WebSocketErrorEvent) => any) | null;
  /**
   * Sends now when open; else queues it (see `maxQueued`, `overflow`).
   * Throws an `InvalidStateError` DOMException once closing or closed.
   */
  send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void;
  /** Closes for good (no reconnect): `code` 1000 or in [3000, 4999] (else an `InvalidAccessError`), `reason` up to 123 bytes (else a `SyntaxError`). */
  close(code?: number, reason?: string): void;
  addEventListener<K extends keyof WebSocketEventMap>(
    type: K,
    listener: (this: WebSocket, ev: WebSocketEventMap[K]) => any,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof WebSocketEventMap>(
    type: K,
    listener: (this: WebSocket, ev: WebSocketEventMap[K]) => any,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}
