/**
 * Realms (`docs/realms.md`, `docs/protocol.md` "Realms"): {@link connectRealm}
 * keeps a live copy of one realm instance's JSON document and writes to it;
 * the patch model, its binary codec, the realm protocol messages and the
 * {@link RealmDocument} bookkeeping underneath are exported for tools and
 * tests.
 *
 * @packageDocumentation
 */
export {
  type AppendOp,
  applyPatch,
  copyJson,
  type DeleteOp,
  getPath,
  type JsonObject,
  type JsonValue,
  type Op,
  type Patch,
  PatchError,
  patchFromJson,
  type Path,
  type PathSegment,
  pathText,
  type SetOp,
} from "./patch.js";
export { type DecodeLimits, decodePatch, encodeLeading, encodePatch, KeyTable, measureOp, PatchDecodeError } from "./codec.js";
export * from "./protocol.js";
export { type DocumentUpdate, type PendingWrite, RealmDocument } from "./document.js";
export { describeRealmClose, REALM_FATAL_CODES, RealmCloseCodeName, RealmClosedError } from "./close-codes.js";
export * from "./connect.js";
