// A join function from the Node client against the real server: `tessera
// dev` on a scratch app with the arena kind and the test module "lobby"
// (test/fixtures/lobby: joinArena creates the shard when it is missing and
// mints the caller a ticket). The client signs in as a guest, calls the
// join function by name, connects with `ticket: async () => ...` and, when
// the connection drops, reconnects with a fresh ticket from the function;
// an unknown function and a bad token come back as ComputeInvokeErrors.
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callFunction,
  ComputeInvokeError,
  connectShard,
  type ShardConnection,
  signInAsGuest,
} from "../../src/node.js";
import { REPO, TesseraServer } from "../helpers/tessera-server.js";

type Join = { shardId: string; subscriberId: string; ticket: string };

let server: TesseraServer;
const open: ShardConnection[] = [];

function joinApp(): string {
  const app = join(mkdtempSync(join(tmpdir(), "tessera-ts-join-")), "app");
  cpSync(join(REPO, "examples/arena/shards"), join(app, "shards"), { recursive: true });
  const fixtures = join(dirname(fileURLToPath(import.meta.url)), "../fixtures");
  cpSync(join(fixtures, "lobby"), join(app, "compute/lobby"), { recursive: true });
  const manifest = {
    name: "ts-join",
    shards: [{ name: "arena", source: "shards/arena", codec: "msgpack", tickRate: 20, idleShutdownSecs: 90 }],
    compute: [
      {
        name: "lobby",
        source: "compute/lobby",
        triggers: [{ triggerType: "invoke", exportName: "joinArena", invokePolicy: { type: "anyone" } }],
      },
    ],
  };
  writeFileSync(join(app, "tessera.json"), JSON.stringify(manifest));
  return app;
}

beforeAll(async () => {
  server = await TesseraServer.start({ appDir: joinApp() });
  await server.waitForModule("lobby");
}, 300_000);
afterAll(async () => {
  for (const c of open) c.close();
  await server?.stop();
  server?.removeApp();
});

describe("joining through a join function", () => {
  it("signs in as a guest, calls joinArena and connects with a ticket function, again after a drop", async () => {
    const guest = await signInAsGuest(server.url);
    expect(guest.userId).toMatch(/^guest-[0-9a-f]{16}$/);
    expect(guest.expires).toBeGreaterThan(Date.now() / 1000);
    let calls = 0;
    const joinArena = async () => {
      calls++;
      return callFunction<Join>(server.url, "joinArena", {}, { token: guest.token });
    };
    const first = await joinArena();
    expect(first).toMatchObject({ shardId: "arena-main", subscriberId: guest.userId });
    const conn = connectShard(first.shardId, {
      url: server.url,
      subscriberId: first.subscriberId,
      ticket: async () => (await joinArena()).ticket,
      reconnect: { initialDelayMs: 50 },
    });
    open.push(conn);
    const welcome = await conn.ready;
    expect(welcome.subscriberId).toBe(guest.userId);
    expect(welcome.shardId).toBe("arena-main");
    expect(calls).toBe(2);

    // A second guest joins the same shard (the function finds it running).
    const other = await signInAsGuest(server.url);
    const second = await callFunction<Join>(server.url, "lobby.joinArena", {}, { token: other.token });
    expect(second).toMatchObject({ shardId: "arena-main", subscriberId: other.userId });

    // A dropped connection reconnects with a ticket from the function.
    const reopened = new Promise<void>((resolve) => {
      const off = conn.on("open", () => (off(), resolve()));
    });
    conn.reconnect();
    await reopened;
    expect(calls).toBe(3);
    expect(conn.state).toBe("open");
  });

  it("refusals come back as ComputeInvokeError", async () => {
    const guest = await signInAsGuest(server.url);
    const missing = await callFunction(server.url, "nope", {}, { token: guest.token }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ComputeInvokeError);
    expect(missing).toMatchObject({ status: 404 });
    expect((missing as Error).message).toMatch(/FUNCTION_NOT_FOUND/);
    const badToken = await callFunction(server.url, "joinArena", {}, { token: "not-a-ticket" }).catch((e: unknown) => e);
    expect(badToken).toMatchObject({ status: 401, code: "unauthorized" });
    // The function itself refuses a caller without a user id.
    const admin = await callFunction(server.url, "joinArena", {}, { token: server.adminToken }).catch((e: unknown) => e);
    expect(admin).toBeInstanceOf(ComputeInvokeError);
    expect((admin as ComputeInvokeError).status).toBe(422);
    expect((admin as Error).message).toMatch(/for players/);
  });
});
