// Compute modules from the Node client against the real server: `tessera
// dev` on a scratch app with the arena kind and the C++ shop example
// (examples/compute/compute/shop) as compute module "shop". A player joined
// to an arena shard calls `buy` with its ticket (the module sees it as
// callerUserId), gets the parsed result and, through onNotify, the NOTIFY
// the shop sends on player:<id>; a contract violation and an unknown export
// come back as ComputeInvokeErrors.
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeInvokeError, connectShard, type Notification, type ShardConnection } from "../../src/node.js";
import { REPO, TesseraServer } from "../helpers/tessera-server.js";

let server: TesseraServer;
const open: ShardConnection[] = [];

function computeApp(): string {
  const app = join(mkdtempSync(join(tmpdir(), "tessera-ts-compute-")), "app");
  cpSync(join(REPO, "examples/arena/shards"), join(app, "shards"), { recursive: true });
  cpSync(join(REPO, "examples/compute/compute/shop"), join(app, "compute/shop"), { recursive: true });
  const manifest = {
    name: "ts-compute",
    shards: [{ name: "arena", source: "shards/arena", codec: "msgpack", tickRate: 20, idleShutdownSecs: 90 }],
    compute: [
      {
        name: "shop",
        source: "compute/shop",
        triggers: [
          {
            triggerType: "invoke",
            exportName: "buy",
            invokePolicy: { type: "anyone" },
            contract: { params: { amount: { type: "int", required: true }, item: { type: "string" } } },
          },
        ],
      },
    ],
  };
  writeFileSync(join(app, "tessera.json"), JSON.stringify(manifest));
  return app;
}

beforeAll(async () => {
  server = await TesseraServer.start({ appDir: computeApp() });
  await server.waitForModule("shop");
}, 300_000);
afterAll(async () => {
  for (const c of open) c.close();
  await server?.stop();
  server?.removeApp();
});

describe("compute modules through the client", () => {
  it("invoke runs the export as the player and the module's NOTIFY reaches onNotify", async () => {
    const joined = await server.join({ shard: "arena-c", kind: "arena", params: { width: 800, height: 500 }, subscriber: "ann" });
    const conn = connectShard(joined.shardId, { ticket: joined.ticket, url: server.url, subscriberId: "ann" });
    open.push(conn);
    await conn.ready;
    const notes: Notification[] = [];
    const got = new Promise<Notification>((resolve) => conn.onNotify((n) => (notes.push(n), resolve(n))));

    const out = await conn.invoke<{ item: string; amount: number; cost: number; gold: number }>("shop", "buy", {
      amount: 3,
      item: "plank",
    });
    expect(out.result).toMatchObject({ item: "plank", amount: 3, cost: 15 });
    expect(typeof out.fuelUsed).toBe("number");
    expect(out.fuelUsed).toBeGreaterThan(0);
    expect(out.flowId).not.toBe("");

    const note = await got;
    expect(note.module).toBe("shop");
    expect(note.channel).toBe("player:ann");
    expect(note.flowId).toBe(out.flowId);
    expect(note.json).toBeDefined();
    expect(note.payload.length).toBeGreaterThan(0);
  });

  it("refusals come back as ComputeInvokeError with the server's code and message", async () => {
    const joined = await server.join({ shard: "arena-c", kind: "arena", params: { width: 800, height: 500 }, subscriber: "bob" });
    const conn = connectShard(joined.shardId, { ticket: joined.ticket, url: server.url });
    open.push(conn);
    await conn.ready;
    const bad = await conn.invoke("shop", "buy", { amount: "three" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ComputeInvokeError);
    expect(bad).toMatchObject({ status: 400, code: "BAD_REQUEST" });
    expect((bad as Error).message).toMatch(/amount/);
    const missing = await conn.invoke("shop", "steal", {}).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ComputeInvokeError);
    expect((missing as ComputeInvokeError).status).toBe(404);
    const noToken = await conn.invoke("shop", "buy", { amount: 1 }, { token: "not-a-ticket" }).catch((e: unknown) => e);
    expect(noToken).toBeInstanceOf(ComputeInvokeError);
    expect([401, 403]).toContain((noToken as ComputeInvokeError).status);
  });
});
