// Reading the shared fixture files under tests/fixtures/ (written by the C++
// tools in tools/): the frame streams and the directory listings.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** `tests/fixtures/<name>` of the repository. */
export function fixtureDir(name: string): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "../../../../tests/fixtures", name);
}

/** The `.json` files of a fixture directory, sorted; empty when the directory is missing. */
export function fixtureJsonFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort();
}

/** One FRAME of a `.frames.bin` stream. */
export interface StoredFrame {
  tick: number;
  payload: Uint8Array;
}

/**
 * `<name>.frames.bin`: per frame u64 LE tick, u32 LE length, payload.
 * Throws on a truncated file.
 */
export function readFramesBin(path: string): StoredFrame[] {
  const buf = readFileSync(path);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: StoredFrame[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < 12) throw new Error(`${path}: truncated frame header at byte ${off}`);
    const tick = Number(view.getBigUint64(off, true));
    const len = view.getUint32(off + 8, true);
    if (buf.length - off - 12 < len) throw new Error(`${path}: frame at byte ${off} needs ${len} bytes`);
    out.push({ tick, payload: new Uint8Array(buf.buffer, buf.byteOffset + off + 12, len) });
    off += 12 + len;
  }
  return out;
}
