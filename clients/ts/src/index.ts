/**
 * `@tessera/client`: connect a browser or Node program to a tessera shard
 * (`connectShard`) or realm (`connectRealm`).
 *
 * ```ts
 * import { connectShard } from "@tessera/client";
 * const shard = connectShard("arena-1", { subscriberId, ticket });
 * shard.on("snapshot", (snap) => draw(snap));
 * shard.send({ move_to: { x: 100, y: 80 } });
 * ```
 *
 * @packageDocumentation
 */
export * from "./protocol.js";
export * from "./client.js";
export * from "./compute.js";
export * from "./realm/index.js";
// --- game layer (src/game/, owned by the game-client engineer)
export * from "./game/index.js";
