// Builds the package into dist/:
//   - one ES module + .d.ts per source file (tsc), for npm consumers;
//   - dist/tessera-client.js: the browser bundle (esbuild, ESM, msgpack
//     included, no `ws`), for pages that import the SDK by URL.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], {
  cwd: root,
  stdio: "inherit",
});
await build({
  entryPoints: [join(root, "src/index.ts")],
  outfile: join(dist, "tessera-client.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2020"],
  sourcemap: true,
  legalComments: "none",
  logLevel: "warning",
});
console.log("built dist/ and dist/tessera-client.js");
