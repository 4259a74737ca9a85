// Starts the real `tessera dev` binary on a scratch copy of examples/arena,
// for the integration and browser tests. The binary is $TESSERA_BIN
// (default: <repo>/build/src/cli/tessera).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
export const TESSERA_BIN = process.env.TESSERA_BIN
  ? resolve(process.env.TESSERA_BIN)
  : join(REPO, "build/src/cli/tessera");

export interface ServerOptions {
  /** Extra `tessera dev` arguments, e.g. ["--mount", "/sdk=..."]. */
  args?: string[];
  /** The port to bind (0: any free one). */
  port?: number;
  /** Reuse this app directory (a restart keeps its .tessera state). */
  appDir?: string;
  /** Environment for the server beyond the test's own (whose TESSERA_* are dropped). */
  env?: Record<string, string>;
}

export class TesseraServer {
  log = "";
  private exited: Promise<number | null>;

  private constructor(
    readonly proc: ChildProcess,
    readonly appDir: string,
    readonly args: string[],
    public port = 0,
    public adminToken = "",
  ) {
    this.exited = new Promise((res) => proc.on("exit", (code, signal) => res(code ?? (signal ? -1 : null))));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Copies examples/arena to a fresh temporary directory. */
  static scratchApp(): string {
    if (!existsSync(TESSERA_BIN)) {
      throw new Error(`no tessera binary at ${TESSERA_BIN}: build it first (make build) or set TESSERA_BIN`);
    }
    const root = mkdtempSync(join(tmpdir(), "tessera-ts-"));
    const app = join(root, "arena");
    cpSync(join(REPO, "examples/arena"), app, {
      recursive: true,
      filter: (src) => !src.includes(`${"/"}.tessera`),
    });
    return app;
  }

  /** Starts `tessera dev APP --port P [args]` and waits until it serves. */
  static async start(options: ServerOptions = {}): Promise<TesseraServer> {
    const appDir = options.appDir ?? TesseraServer.scratchApp();
    const args = options.args ?? [];
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TESSERA_")) env[k] = v;
    Object.assign(env, options.env ?? {});
    const proc = spawn(TESSERA_BIN, ["dev", appDir, "--port", String(options.port ?? 0), ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const server = new TesseraServer(proc, appDir, args);
    const ready = new Promise<void>((resolveReady, reject) => {
      const onData = (chunk: Buffer) => {
        server.log += chunk.toString();
        const port = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(server.log);
        const token = /admin token: (\S+)/.exec(server.log);
        if (port && token && !server.port) {
          server.port = Number(port[1]);
          server.adminToken = token[1];
          resolveReady();
        }
      };
      proc.stdout!.on("data", onData);
      proc.stderr!.on("data", onData);
      proc.on("exit", (code) => reject(new Error(`tessera dev exited (${code}) before it was ready:\n${server.log}`)));
      proc.on("error", reject);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`tessera dev was not ready in 120 s:\n${server.log}`)), 120_000);
    });
    try {
      await Promise.race([ready, timeout]);
      await server.waitHealthy();
    } catch (e) {
      proc.kill("SIGKILL");
      throw e;
    } finally {
      clearTimeout(timer);
    }
    return server;
  }

  private async waitHealthy(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      try {
        const r = await fetch(`${this.url}/healthz`);
        if (r.ok) return;
      } catch {
        /* not yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`tessera dev on ${this.url} never answered /healthz:\n${this.log}`);
  }

  /** Stops the server (SIGTERM: shards are saved) and waits for the exit. */
  /** Waits until compute module `name` has compiled its first version and is enabled. */
  async waitForModule(name: string, timeoutMs = 240_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      const r = await fetch(`${this.url}/api/compute/modules`, {
        headers: { Authorization: `Bearer ${this.adminToken}` },
      });
      last = await r.text();
      if (r.ok) {
        const m = (JSON.parse(last) as { modules: { name: string; enabled: boolean; activeVersion: unknown }[] }).modules.find(
          (x) => x.name === name,
        );
        if (m?.enabled && m.activeVersion) return;
      }
      await new Promise((res) => setTimeout(res, 250));
    }
    throw new Error(`module ${name} never enabled: ${last}\n${this.log}`);
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), 15_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops and starts again on the same port and app directory. */
  async restart(): Promise<TesseraServer> {
    await this.stop();
    return TesseraServer.start({ appDir: this.appDir, port: this.port, args: this.args });
  }

  /** Removes the scratch app directory. */
  removeApp(): void {
    rmSync(dirname(this.appDir), { recursive: true, force: true });
  }

  /** An admin API call (`Authorization: Bearer <admin token>`); returns the status and the JSON body. */
  async api(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const r = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
    return { status: r.status, json };
  }

  /** `POST /api/dev/join`. */
  async join(body: { shard: string; kind?: string; params?: unknown; subscriber?: string }): Promise<{
    shardId: string;
    subscriberId: string;
    ticket: string;
  }> {
    const r = await fetch(`${this.url}/api/dev/join`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await r.json()) as { shardId: string; subscriberId: string; ticket: string; message?: string };
    if (!r.ok) throw new Error(`join failed: ${r.status} ${json.message ?? ""}`);
    return json;
  }
}

/** Whether `tessera dev --help` lists --mount (the dev server can serve the SDK). */
export function devSupportsMount(): boolean {
  const r = spawnSync(TESSERA_BIN, ["dev", "--help"], { encoding: "utf8" });
  return /--mount/.test(r.stdout + r.stderr);
}
