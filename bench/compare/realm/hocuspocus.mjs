// The Hocuspocus side of bench/compare/realm: a plain @hocuspocus/server
// (Yjs documents over y-protocols), no extensions, so no persistence: the
// documents live in memory as long as a client is connected.
//
//   node hocuspocus.mjs [--port P] [--host 127.0.0.1]
//
// Prints one line `hocuspocus: listening on HOST:PORT` once it serves, then
// serves until SIGINT/SIGTERM. Every bot opens the document "bench" and
// writes into its own Y.Map under the root map "players" (adapters.mjs); the
// server only relays and merges updates, as Hocuspocus does out of the box.
import { Server } from "@hocuspocus/server";

let port = 0;
let host = "127.0.0.1";
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--port") port = Number(argv[++i]);
  else if (argv[i] === "--host") host = argv[++i];
  else {
    console.error(`hocuspocus.mjs: unknown argument ${argv[i]}`);
    process.exit(2);
  }
}

const server = new Server({ port, address: host, quiet: true, stopOnSignals: true });
await server.listen();
console.log(`hocuspocus: listening on ${host}:${server.address.port}`);
