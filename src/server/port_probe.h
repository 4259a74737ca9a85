// Checks that host:port can be bound before the server does anything slow
// or with lasting effects (building the app's kinds, restoring shards from
// a store another process may be serving), so a second instance fails fast
// and harmlessly.
#ifndef TESSERA_SERVER_PORT_PROBE_H_
#define TESSERA_SERVER_PORT_PROBE_H_

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tessera::server {

// Binds (with SO_REUSEADDR, as the server does) and releases at once. Port
// 0 always succeeds. Errors: kIo "port PORT on HOST is taken ..." (naming
// --port) when another socket holds it, else "cannot bind HOST:PORT:
// <reason>". Racy by nature: the server's own bind still reports a later
// conflict.
Status ProbeBind(const std::string& host, uint16_t port);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_PORT_PROBE_H_
