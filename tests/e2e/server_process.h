// The real `tessera` binary as a child process, for end-to-end tests and
// the bench: spawned with a clean TESSERA_* environment, its stdout and
// stderr going to a log file, ready once it has printed the port it bound
// and /healthz answers 200.
//
// Threading: one controlling thread per ServerProcess. The child gets
// SIGKILL when the thread that started it exits (PR_SET_PDEATHSIG) and
// when the object is destroyed while it still runs.
#ifndef TESSERA_TESTS_E2E_SERVER_PROCESS_H_
#define TESSERA_TESTS_E2E_SERVER_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera::e2e {

struct SpawnOptions {
  // argv[0] is a path (not searched in PATH).
  std::vector<std::string> argv;
  // Set in the child's environment after every inherited TESSERA_* variable
  // was removed.
  std::vector<std::pair<std::string, std::string>> env;
  std::filesystem::path log_path;
  // How long the start (build, restore, bind) may take.
  int ready_timeout_ms = 60000;
};

class ServerProcess {
 public:
  // Spawns the process and waits until it is ready (see the file comment).
  // The port is read from the first line containing "127.0.0.1:<port>"
  // (`tessera dev` and `tessera serve --host 127.0.0.1` both print one).
  // Errors: kIo if it cannot be spawned or exits first (the message holds
  // the log), kDeadlineExceeded.
  static Result<std::unique_ptr<ServerProcess>> Start(SpawnOptions options);
  // SIGKILL and reap if it still runs.
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }
  uint16_t port() const { return port_; }
  // Everything the process printed so far.
  std::string Log() const;

  // Sends `signal`. Errors: kFailedPrecondition once it has exited.
  Status Signal(int signal);
  // Waits for the exit and reaps the process. Returns the exit code, or
  // 128 + the signal number if a signal ended it. Errors:
  // kDeadlineExceeded (the process still runs).
  Result<int> WaitExit(int timeout_ms);
  bool exited() const { return exit_status_.has_value(); }

 private:
  ServerProcess(pid_t pid, std::filesystem::path log_path)
      : pid_(pid), log_path_(std::move(log_path)) {}
  // Non-blocking reap; true once exited.
  bool Reap();
  Status AwaitReady(int timeout_ms);

  const pid_t pid_;
  const std::filesystem::path log_path_;
  uint16_t port_ = 0;
  std::optional<int> exit_status_;
};

// The "127.0.0.1:<port>" port in `text`, if any.
std::optional<uint16_t> FindLoopbackPort(const std::string& text);

}  // namespace tessera::e2e

#endif  // TESSERA_TESTS_E2E_SERVER_PROCESS_H_
