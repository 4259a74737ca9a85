#include "tests/e2e/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/net/test_client.h"

extern char** environ;

namespace tessera::e2e {
namespace {

using Clock = std::chrono::steady_clock;

int ElapsedMs(Clock::time_point start) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                              Clock::now() - start)
                              .count());
}

// The inherited environment without TESSERA_*, plus `extra`.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TESSERA_", 8) != 0) env.emplace_back(*e);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::optional<uint16_t> FindLoopbackPort(const std::string& text) {
  static const std::string kPrefix = "127.0.0.1:";
  for (size_t at = text.find(kPrefix); at != std::string::npos;
       at = text.find(kPrefix, at + 1)) {
    size_t i = at + kPrefix.size();
    uint32_t port = 0;
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 6) {
      port = port * 10 + static_cast<uint32_t>(text[i] - '0');
      ++i;
      ++digits;
    }
    if (digits > 0 && port > 0 && port < 65536) {
      return static_cast<uint16_t>(port);
    }
  }
  return std::nullopt;
}

Result<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    SpawnOptions options) {
  if (options.argv.empty()) return InvalidArgument("empty argv");
  std::vector<std::string> argv_strings = options.argv;
  std::vector<std::string> env_strings = ChildEnvironment(options.env);
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<char*> envp = CStrings(env_strings);
  const int log_fd = open(options.log_path.c_str(),
                          O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return IoError("cannot open " + options.log_path.string() + ": " +
                   std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return IoError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here on.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    // The test may have blocked signals on its threads; the server sets its
    // own mask.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(log_fd);
  std::unique_ptr<ServerProcess> process(
      new ServerProcess(pid, options.log_path));
  Status ready = process->AwaitReady(options.ready_timeout_ms);
  if (!ready.ok()) return ready;
  return process;
}

ServerProcess::~ServerProcess() {
  if (exited()) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

std::string ServerProcess::Log() const {
  std::ifstream in(log_path_, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

bool ServerProcess::Reap() {
  if (exited()) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  exit_status_ =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

Status ServerProcess::AwaitReady(int timeout_ms) {
  // The server prints its port only after it bound it, then /healthz must
  // answer. Both are polled: neither side can signal us otherwise.
  const auto start = Clock::now();
  while (port_ == 0) {
    if (Reap()) {
      return IoError("the server exited with " + std::to_string(*exit_status_) +
                     " before it was ready:\n" + Log());
    }
    if (auto port = FindLoopbackPort(Log())) {
      port_ = *port;
      break;
    }
    if (ElapsedMs(start) > timeout_ms) {
      return Status(StatusCode::kDeadlineExceeded,
                    "the server printed no port in time:\n" + Log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (;;) {
    auto health = net::testing::HttpCall("127.0.0.1", port_, "GET", "/healthz",
                                         "", {}, 1000);
    if (health.ok() && health->status == 200) return Status::Ok();
    if (Reap()) return IoError("the server exited:\n" + Log());
    if (ElapsedMs(start) > timeout_ms) {
      return Status(StatusCode::kDeadlineExceeded,
                    "/healthz did not answer 200 in time:\n" + Log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status ServerProcess::Signal(int signal) {
  if (Reap()) return Status(StatusCode::kFailedPrecondition, "exited");
  if (kill(pid_, signal) != 0) {
    return IoError(std::string("kill: ") + std::strerror(errno));
  }
  return Status::Ok();
}

Result<int> ServerProcess::WaitExit(int timeout_ms) {
  const auto start = Clock::now();
  // A pidfd becomes readable when the process exits: no polling loop.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  while (!Reap()) {
    const int left = timeout_ms - ElapsedMs(start);
    if (left <= 0) break;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      poll(&p, 1, left);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (pidfd >= 0) close(pidfd);
  if (!exited()) {
    return Status(
        StatusCode::kDeadlineExceeded,
        "the server still runs after " + std::to_string(timeout_ms) + " ms");
  }
  return *exit_status_;
}

}  // namespace tessera::e2e
