// The shared replication fixtures (tests/fixtures/replication/): the C++
// reference decoder and this decoder read the same payloads and must end
// each frame with the same state, entered and left lists.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EntityReplica } from "../../src/game/index.js";
import { fixtureDir, fixtureJsonFiles, readFramesBin } from "./fixture-files.js";

const DIR = fixtureDir("replication");

interface FixtureEntity {
  id: number;
  x: number;
  y: number;
  z: number;
  q: [number, number, number];
  components: Record<string, string>; // component id -> hex bytes
}

interface FixtureFrame {
  tick: number;
  payload_hex: string;
  ignored: boolean;
  entered: number[];
  left: number[];
  entities: FixtureEntity[];
}

interface Fixture {
  name: string;
  description: string;
  frames: FixtureFrame[];
}

const fromHex = (hex: string): Uint8Array => Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16));
const toHex = (bytes: Uint8Array): string => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** The replica in the fixtures' shape. */
function snapshot(replica: EntityReplica): FixtureEntity[] {
  return [...replica.entities]
    .sort(([a], [b]) => a - b)
    .map(([id, e]) => {
      const [x, y, z] = replica.position(e);
      const components: Record<string, string> = {};
      for (const [cid, bytes] of [...e.components].sort(([a], [b]) => a - b)) components[String(cid)] = toHex(bytes);
      return { id, x, y, z, q: [...e.q] as [number, number, number], components };
    });
}

const files = fixtureJsonFiles(DIR);

describe("shared replication fixtures (same results as the C++ reference decoder)", () => {
  it("are present", () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const file of files) {
    const fixture = JSON.parse(readFileSync(join(DIR, file), "utf8")) as Fixture;
    it(`${fixture.name}: ${fixture.description}`, () => {
      const replica = new EntityReplica();
      for (const frame of fixture.frames) {
        const where = `${file} tick ${frame.tick}`;
        const change = replica.apply(fromHex(frame.payload_hex));
        expect(change.ignored, where).toBe(frame.ignored);
        expect([...change.entered].sort((a, b) => a - b), `${where} entered`).toEqual(frame.entered);
        expect([...change.left].sort((a, b) => a - b), `${where} left`).toEqual(frame.left);
        // World coordinates too: q * precision, the same double in both languages.
        expect(snapshot(replica), `${where} entities`).toEqual(frame.entities);
      }
    });

    const bin = join(DIR, file.replace(/\.json$/, ".frames.bin"));
    it(`${fixture.name}: the binary stream holds the same payloads`, () => {
      const frames = readFramesBin(bin);
      expect(frames.map((f) => [f.tick, toHex(f.payload)])).toEqual(fixture.frames.map((f) => [f.tick, f.payload_hex]));
    });
  }
});
