// The loopback floor of bench/realm/serving: a plain `ws` server in Node that
// sends every message it receives, as it is, to every other connected
// client. Nothing is parsed, checked, merged, stored or acknowledged, so its
// latency and CPU are what moving the same messages over loopback WebSockets
// costs on this machine, now.
//
//   node relay.mjs [--port P] [--host 127.0.0.1]
//
// Prints `relay: listening on HOST:PORT`, then serves until SIGINT/SIGTERM.
import { createRequire } from "node:module";
import path from "node:path";

import { TS_CLIENT_DIR } from "../../compare/harness/common.mjs";

const { WebSocketServer } = createRequire(path.join(TS_CLIENT_DIR, "package.json"))("ws");

let port = 0;
let host = "127.0.0.1";
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--port") port = Number(argv[++i]);
  else if (argv[i] === "--host") host = argv[++i];
  else {
    console.error(`relay.mjs: unknown argument ${argv[i]}`);
    process.exit(2);
  }
}

const wss = new WebSocketServer({ port, host });
wss.on("connection", (ws) => {
  ws.on("message", (data, isBinary) => {
    for (const other of wss.clients) {
      if (other !== ws && other.readyState === other.OPEN) other.send(data, { binary: isBinary });
    }
  });
  ws.on("error", () => {});
});
wss.on("listening", () => console.log(`relay: listening on ${host}:${wss.address().port}`));
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => wss.close(() => process.exit(0)));
