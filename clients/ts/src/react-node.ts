/**
 * Node entry of `@tessera/client/react` (server rendering, tests): `useShard`
 * with `ws` as the default WebSocket implementation.
 *
 * @packageDocumentation
 */
import "./node-websocket.js";
export * from "./react.js";
