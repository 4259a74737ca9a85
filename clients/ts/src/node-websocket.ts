// Side effect: makes the `ws` package the default WebSocket of connectShard
// (Node 20 has no global WebSocket). Imported by the Node entries only.
import WebSocket from "ws";
import { setDefaultWebSocket, type WebSocketConstructor } from "./client.js";

setDefaultWebSocket(WebSocket as unknown as WebSocketConstructor);
