#include "server/run_app_server.h"

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

namespace tessera::server {
namespace {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Ends the process if the shutdown overruns its deadline; Disarm() when it
// finished in time.
class ShutdownDeadline {
 public:
  ShutdownDeadline() {
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::seconds(kShutdownDeadlineSecs),
                        [this] { return done_; })) {
        std::cerr << "tessera: shutdown took longer than "
                  << kShutdownDeadlineSecs << " s; exiting now\n";
        std::_Exit(1);
      }
    });
  }
  ~ShutdownDeadline() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int RunAppServer(AppServerOptions options,
                 const std::function<void(const AppServer&)>& on_ready) {
  BlockTerminationSignals();
  Result<std::unique_ptr<AppServer>> server =
      AppServer::Start(std::move(options), std::cerr);
  if (!server.ok()) {
    std::cerr << "error: " << server.status().message() << "\n";
    return 1;
  }
  if (on_ready) on_ready(**server);

  sigset_t set = TerminationSignals();
  int signal_number = 0;
  while (sigwait(&set, &signal_number) != 0) {
  }
  std::cerr << "tessera: " << (signal_number == SIGINT ? "SIGINT" : "SIGTERM")
            << ": saving shards and closing connections\n";
  ShutdownDeadline deadline;
  (*server)->Shutdown();
  const shard::ShardHost::ShutdownReport report = (*server)->shutdown_report();
  server->reset();
  std::cerr << "tessera: stopped; " << report.saved << " of " << report.running
            << " running shard" << (report.running == 1 ? "" : "s") << " saved";
  if (report.unsaved > 0) {
    std::cerr << " (" << report.unsaved
              << " without tessera_save or whose save failed: they start "
                 "over from init)";
  }
  std::cerr << "\n";
  return 0;
}

}  // namespace tessera::server
