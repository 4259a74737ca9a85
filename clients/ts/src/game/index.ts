/**
 * The game layer of `@tessera/client`: replicated entities (the `entities`
 * payload of FRAME), the shard clock, interpolation, prediction and view-tick
 * stamping. See the "Game client" section of the package README.
 *
 * @packageDocumentation
 */
export {
  connectShardGame,
  ConnectedShardGame,
  type ConnectShardGameOptions,
} from "./connect.js";
export { ShardGame, type GameLink, type GameTimingOptions } from "./shard-game.js";
export { ShardClock, type ShardClockOptions } from "./clock.js";
export { Predictor, type PendingInput, type StepFunction } from "./predictor.js";
export {
  EntityTimeline,
  type EntitySample,
  type RenderEntity,
  type RenderPosition,
  type TickState,
} from "./timeline.js";
export {
  decodeEntities,
  EntitiesDecodeError,
  EntityReplica,
  FLAG_BASELINE,
  FLAG_Y_UP,
  MASK_C,
  MASK_X,
  MASK_Y,
  MASK_Z,
  MAX_ENTITY_ID,
  MAX_EXP_GOLOMB_ORDER,
  type DecodedEntities,
  type DecodedSpawn,
  type DecodedUpdate,
  type EntitiesErrorKind,
  type QuantisedPosition,
  type ReplicaChange,
  type ReplicaEntity,
} from "./entities-decoder.js";
