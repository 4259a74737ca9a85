#include "common/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

extern char** environ;

namespace tessera {

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv) {
  return RunProcess(argv, nullptr);
}

Result<ProcessResult> RunProcess(
    const std::vector<std::string>& argv,
    const std::function<void(std::string_view)>& on_output) {
  if (argv.empty()) return InvalidArgument("empty command");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return IoError(std::string("pipe: ") + strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return IoError("cannot run `" + argv[0] + "`: " + strerror(rc));
  }
  ProcessResult result;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
      if (on_output) on_output(std::string_view(buf, static_cast<size_t>(n)));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    s += a.find(' ') == std::string::npos ? a : "'" + a + "'";
  }
  return s;
}

}  // namespace tessera
