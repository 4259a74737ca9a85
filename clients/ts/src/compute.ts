/**
 * Compute modules from the client (docs/compute.md): notifications pushed
 * to the player (NOTIFY, decoded into a {@link Notification}), calls of a
 * module's published export over HTTP (`POST
 * /api/compute/modules/<module>/invoke/<export>`), calls of the app's
 * functions by name (`POST /api/functions/<name>`) and guest sign-in (`POST
 * /api/auth/guest`), the usual way into a join function:
 *
 * ```ts
 * const guest = await signInAsGuest(url);
 * const join = () => callFunction<Join>(url, "joinArena", {}, { token: guest.token });
 * const first = await join();
 * const shard = connectShard(first.shardId, {
 *   url, subscriberId: first.subscriberId,
 *   ticket: async () => (await join()).ticket, // again on every reconnect
 * });
 * ```
 *
 * @packageDocumentation
 */
import type { NotifyMessage } from "./protocol.js";

/** A compute module's notification, as `onNotify` handlers receive it. */
export interface Notification {
  /** The emitting module. */
  module: string;
  /** The channel it emitted on (`all`, `shard:<id>`, `kind:<kind>`, `group:<name>`, `player:<id>`) or `spatial:<shard>`. */
  channel: string;
  /** The payload bytes (at most 1,024). */
  payload: Uint8Array;
  /** The payload parsed as UTF-8 JSON, when it is JSON; absent otherwise. */
  json?: unknown;
  /** The flow of the run that emitted it (as in the module's runs and logs). */
  flowId: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Turns a decoded NOTIFY into a {@link Notification} (JSON parsed when it parses). */
export function toNotification(msg: NotifyMessage): Notification {
  const note: Notification = { module: msg.module, channel: msg.channel, payload: msg.payload, flowId: msg.flowId };
  try {
    note.json = JSON.parse(utf8.decode(msg.payload));
  } catch {
    /* not JSON: payload only */
  }
  return note;
}

/** What an invoke returns. */
export interface InvokeResult<R = unknown> {
  /** The export's output: parsed JSON when it is JSON, else the raw bytes. */
  result: R | Uint8Array;
  /** Fuel the call used. */
  fuelUsed: number;
  /** How long the call ran in the sandbox, in µs. */
  durationUs: number;
  /** The call's flow id (its run row, logs and the events it caused). */
  flowId: string;
}

/**
 * An invoke that failed: `code` and `message` are the server's (e.g.
 * `BAD_REQUEST` "params.amount: expected int, got string" for a contract
 * violation, 403 for an invoke policy that refuses the caller, 422 when the
 * run failed), or `NETWORK` / `BAD_RESPONSE` when no usable answer came.
 */
export class ComputeInvokeError extends Error {
  /** The HTTP status (0 when the request did not get an answer). */
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "ComputeInvokeError";
    this.status = status;
    this.code = code;
  }
}

/** A `fetch` implementation (the global one by default). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string; signal?: AbortSignal },
) => Promise<{ status: number; ok: boolean; text(): Promise<string> }>;

/** Options of {@link invokeCompute}. */
export interface InvokeOptions {
  /** The server's base URL, `http(s)://host:port` (`ws(s)://` is accepted too). */
  url: string;
  /** The bearer token: a player ticket (its subscriber is the caller) or a management token. */
  token: string;
  /** The `fetch` to use (default: the global one). */
  fetch?: FetchLike;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** The HTTP URL of `path` (starting with "/") under an http(s) or ws(s) base. */
function apiUrl(base: string, path: string): string {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    throw new Error(`tessera: url must be absolute, like http://127.0.0.1:4321 (got "${base}")`);
  }
  if (u.protocol === "ws:") u.protocol = "http:";
  else if (u.protocol === "wss:") u.protocol = "https:";
  else if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new Error(`tessera: url must be http(s):// or ws(s):// (got "${base}")`);
  }
  const prefix = u.pathname.replace(/\/+$/, "");
  return `${u.protocol}//${u.host}${prefix}${path}`;
}

/** The HTTP URL of a module's export from an http(s) or ws(s) base. */
export function invokeUrl(base: string, module: string, exportName: string): string {
  return apiUrl(base, `/api/compute/modules/${encodeURIComponent(module)}/invoke/${encodeURIComponent(exportName)}`);
}

/** The HTTP URL of the app's function `name` (`POST /api/functions/<name>`) from an http(s) or ws(s) base. */
export function functionUrl(base: string, name: string): string {
  return apiUrl(base, `/api/functions/${encodeURIComponent(name)}`);
}

function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Options of the HTTP calls ({@link signInAsGuest}, {@link callFunction}). */
export interface CallOptions {
  /** The `fetch` to use (default: the global one). */
  fetch?: FetchLike;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/**
 * POSTs `body` to `url` (with `token` as the bearer when given) and returns
 * the answer's JSON object; throws a {@link ComputeInvokeError} for a
 * refusal (the server's code and message), `NETWORK` and `BAD_RESPONSE`.
 */
async function postJson(
  url: string,
  what: string,
  body: unknown,
  token: string | undefined,
  options: CallOptions,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const doFetch: FetchLike | undefined = options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch;
  if (!doFetch) throw new Error("tessera: no fetch implementation (pass options.fetch)");
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  let status = 0;
  let text: string;
  try {
    const res = await doFetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    status = res.status;
    text = await res.text();
  } catch (e) {
    throw new ComputeInvokeError(status, "NETWORK", `tessera: ${what}: ${(e as Error)?.message ?? e}`);
  }
  let parsed: Record<string, unknown> | undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      parsed = value as Record<string, unknown>;
    }
  } catch {
    /* below */
  }
  if (status < 200 || status >= 300) {
    const code = typeof parsed?.code === "string" ? parsed.code : `HTTP_${status}`;
    const message = typeof parsed?.message === "string" ? parsed.message : text.slice(0, 200) || `HTTP ${status}`;
    throw new ComputeInvokeError(status, code, message);
  }
  if (parsed === undefined) {
    throw new ComputeInvokeError(status, "BAD_RESPONSE", `tessera: ${what}: the answer is not a JSON object`);
  }
  return { status, body: parsed };
}

/** An invoke answer's fields as an {@link InvokeResult}. */
function toInvokeResult<R>(status: number, body: Record<string, unknown>): InvokeResult<R> {
  let result: R | Uint8Array;
  if ("resultJson" in body) {
    result = body.resultJson as R;
  } else if (typeof body.resultBase64 === "string") {
    try {
      result = base64ToBytes(body.resultBase64);
    } catch {
      throw new ComputeInvokeError(status, "BAD_RESPONSE", "tessera: resultBase64 is not base64");
    }
  } else {
    result = new Uint8Array(0);
  }
  return {
    result,
    fuelUsed: num(body.fuelUsed),
    durationUs: num(body.durationUs),
    flowId: typeof body.flowId === "string" ? body.flowId : "",
  };
}

/**
 * Calls export `exportName` of compute module `module` with `params` (a
 * JSON value; the module receives `{"export", "params", "callerUserId"}`).
 *
 * @throws {@link ComputeInvokeError} with the server's code and message on
 *   any refusal or failure, `NETWORK` when the request failed, `BAD_RESPONSE`
 *   when the answer is not the API's JSON
 */
export async function invokeCompute<R = unknown>(
  module: string,
  exportName: string,
  params: unknown,
  options: InvokeOptions,
): Promise<InvokeResult<R>> {
  if (typeof module !== "string" || module === "") throw new Error("tessera: invoke needs a module name");
  if (typeof exportName !== "string" || exportName === "") throw new Error("tessera: invoke needs an export name");
  const url = invokeUrl(options.url, module, exportName);
  const answer = await postJson(url, `invoke ${module}.${exportName}`, { params: params ?? {} }, options.token, options);
  return toInvokeResult<R>(answer.status, answer.body);
}

/** A guest's identity, from {@link signInAsGuest}. */
export interface GuestSession {
  /** The guest's user id, `guest-<16 hex digits>`: the subscriber of its join tickets. */
  userId: string;
  /** The guest's bearer token (a player ticket) for {@link callFunction} and {@link invokeCompute}. */
  token: string;
  /** When the token expires, in Unix seconds (10 minutes after the sign-in). */
  expires: number;
}

/**
 * Signs in as a new guest (`POST /api/auth/guest`; served by `tessera dev`,
 * and by `tessera serve` with `TESSERA_GUEST_AUTH=on`): a fresh user id and
 * a token that makes it the caller of functions.
 *
 * @param baseUrl the server, `http(s)://host:port` (`ws(s)://` is accepted too)
 * @throws {@link ComputeInvokeError}: 404 when the server does not offer
 *   guest sign-in, 429 `rate_limited` when this address signed in too often
 *   (`Retry-After` says when to try again), `NETWORK`, `BAD_RESPONSE`
 */
export async function signInAsGuest(baseUrl: string, options: CallOptions = {}): Promise<GuestSession> {
  const answer = await postJson(apiUrl(baseUrl, "/api/auth/guest"), "guest sign-in", {}, undefined, options);
  const { userId, token, expires } = answer.body;
  if (typeof userId !== "string" || typeof token !== "string" || token === "") {
    throw new ComputeInvokeError(answer.status, "BAD_RESPONSE", "tessera: guest sign-in: the answer lacks userId or token");
  }
  return { userId, token, expires: num(expires) };
}

/**
 * Calls the app's function `name` (`POST /api/functions/<name>`): an invoke
 * export, named `"module.export"` or by the bare export when one module
 * alone has it. Resolves with the function's JSON result: for a join
 * function, `{ shardId, subscriberId, ticket }`.
 *
 * @param params the function's params (a JSON object; default `{}`)
 * @param options.token the bearer: a guest's token ({@link signInAsGuest}),
 *   a player's ticket, or a management token
 * @throws {@link ComputeInvokeError} as {@link invokeCompute}, with
 *   `not_found` (404) for an unknown function and `BAD_REQUEST` (400) for a
 *   bare name two modules have; `BAD_RESPONSE` when the result is not JSON
 *   (call {@link invokeCompute} for bytes)
 */
export async function callFunction<R = unknown>(
  baseUrl: string,
  name: string,
  params: unknown,
  options: CallOptions & { token: string },
): Promise<R> {
  if (typeof name !== "string" || name === "") throw new Error("tessera: callFunction needs a function name");
  if (typeof options?.token !== "string") throw new Error("tessera: callFunction needs options.token");
  const answer = await postJson(functionUrl(baseUrl, name), `function ${name}`, { params: params ?? {} }, options.token, options);
  if (!("resultJson" in answer.body)) {
    throw new ComputeInvokeError(
      answer.status,
      "BAD_RESPONSE",
      `tessera: function ${name}: the result is not JSON (call invokeCompute for a result in bytes)`,
    );
  }
  return answer.body.resultJson as R;
}
