/**
 * Node entry of `@tessera/client`: the same API as the browser entry, with
 * the `ws` package as the default WebSocket implementation.
 *
 * @packageDocumentation
 */
import "./node-websocket.js";
export * from "./index.js";
