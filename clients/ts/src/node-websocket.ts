// Side effect: makes `ws` the default WebSocket for connectShard in Node.
export {};
