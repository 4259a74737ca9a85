// The process side of `tessera dev` / `tessera serve`: start an AppServer,
// wait for SIGINT or SIGTERM, shut it down (saving every shard, closing
// connections with 1001) and return the exit code. A shutdown that takes
// more than 10 s ends the process anyway.
//
// Threading: call from the main thread before any other thread exists, so
// every thread inherits the blocked signals and only sigwait sees them.
#ifndef TESSERA_SERVER_RUN_APP_SERVER_H_
#define TESSERA_SERVER_RUN_APP_SERVER_H_

#include <functional>

#include "server/app_server.h"

namespace tessera::server {

inline constexpr int kShutdownDeadlineSecs = 10;

// Blocks SIGINT/SIGTERM (and ignores SIGPIPE) in the calling thread.
void BlockTerminationSignals();

// Starts the server, calls `on_ready` (print the URL etc.), serves until a
// signal, shuts down. Returns 0 after a clean shutdown, 1 if the server
// did not start (the error is printed to stderr).
int RunAppServer(AppServerOptions options,
                 const std::function<void(const AppServer&)>& on_ready);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_RUN_APP_SERVER_H_
