/**
 * Compute modules from the client (docs/compute.md): notifications pushed
 * to the player (NOTIFY, decoded into a {@link Notification}) and calls of a
 * module's published export over HTTP (`POST
 * /api/compute/modules/<module>/invoke/<export>`).
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

/** The HTTP URL of a module's export from an http(s) or ws(s) base. */
export function invokeUrl(base: string, module: string, exportName: string): string {
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
  return (
    `${u.protocol}//${u.host}${prefix}/api/compute/modules/` +
    `${encodeURIComponent(module)}/invoke/${encodeURIComponent(exportName)}`
  );
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
  const doFetch: FetchLike | undefined = options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch;
  if (!doFetch) throw new Error("tessera: no fetch implementation (pass options.fetch)");
  const url = invokeUrl(options.url, module, exportName);
  let status = 0;
  let text: string;
  try {
    const res = await doFetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${options.token}` },
      body: JSON.stringify({ params: params ?? {} }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    status = res.status;
    text = await res.text();
  } catch (e) {
    throw new ComputeInvokeError(status, "NETWORK", `tessera: invoke ${module}.${exportName}: ${(e as Error)?.message ?? e}`);
  }
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      body = parsed as Record<string, unknown>;
    }
  } catch {
    /* below */
  }
  if (status < 200 || status >= 300) {
    const code = typeof body?.code === "string" ? body.code : `HTTP_${status}`;
    const message = typeof body?.message === "string" ? body.message : text.slice(0, 200) || `HTTP ${status}`;
    throw new ComputeInvokeError(status, code, message);
  }
  if (body === undefined) {
    throw new ComputeInvokeError(status, "BAD_RESPONSE", `tessera: invoke ${module}.${exportName}: the answer is not a JSON object`);
  }
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
