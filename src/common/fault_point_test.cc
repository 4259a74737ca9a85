// FaultPoint reads its variable once per process, so every case runs in a
// forked child that sets the variable before its first call; this parent
// process never calls FaultPoint. The child's stderr comes back on a pipe.
#include "common/fault_point.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace tessera {
namespace {

struct Child {
  int status = 0;
  std::string stderr_text;
  bool killed_by_sigkill() const {
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }
  bool exited_ok() const {
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
};

void Say(const std::string& line) {
  std::string text = line + "\n";
  (void)!write(STDERR_FILENO, text.data(), text.size());
}

// Runs `body` in a child with TESSERA_FAULT_POINT = `value` (unset when
// null); the child exits 0 when `body` returns.
Child RunChild(const char* value, const std::function<void()>& body) {
  Child result;
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    close(fds[1]);
    if (value == nullptr) {
      unsetenv(kFaultPointEnv);
    } else {
      setenv(kFaultPointEnv, value, 1);
    }
    body();
    _exit(0);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    result.stderr_text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  while (waitpid(pid, &result.status, 0) < 0 && errno == EINTR) {
  }
  return result;
}

// Hits `name` `times` times, saying "passed <name> <i>" after each.
void Hit(const char* name, int times) {
  for (int i = 1; i <= times; ++i) {
    FaultPoint(name);
    Say(std::string("passed ") + name + " " + std::to_string(i));
  }
}

TEST(FaultPointTest, UnsetNeverFires) {
  Child c = RunChild(nullptr, [] { Hit("transfer.after_out", 3); });
  EXPECT_TRUE(c.exited_ok()) << c.status;
  EXPECT_EQ(c.stderr_text,
            "passed transfer.after_out 1\npassed transfer.after_out 2\n"
            "passed transfer.after_out 3\n");
}

TEST(FaultPointTest, BareNameFiresAtTheFirstHit) {
  Child c = RunChild("transfer.after_out", [] {
    Hit("transfer.before_out", 2);
    Hit("transfer.after_out", 2);
  });
  EXPECT_TRUE(c.killed_by_sigkill()) << c.status;
  EXPECT_EQ(c.stderr_text,
            "passed transfer.before_out 1\npassed transfer.before_out 2\n"
            "fault point transfer.after_out: killing this process\n");
}

TEST(FaultPointTest, CountFiresAtTheNthHitOfThatNameOnly) {
  Child c = RunChild("a@3", [] {
    Hit("a", 1);
    Hit("b", 5);  // other names do not count
    Hit("a", 5);
  });
  EXPECT_TRUE(c.killed_by_sigkill()) << c.status;
  EXPECT_EQ(c.stderr_text,
            "passed a 1\npassed b 1\npassed b 2\npassed b 3\npassed b 4\n"
            "passed b 5\npassed a 1\n"  // the 2nd hit of a; the 3rd fires
            "fault point a: killing this process\n");
}

TEST(FaultPointTest, FewerHitsThanTheCountSurvive) {
  Child c = RunChild("a@3", [] { Hit("a", 2); });
  EXPECT_TRUE(c.exited_ok()) << c.status;
  EXPECT_EQ(c.stderr_text, "passed a 1\npassed a 2\n");
}

TEST(FaultPointTest, OtherNamesAndPrefixesDoNotFire) {
  Child c = RunChild("transfer.after_in", [] {
    Hit("transfer.after_in_call", 1);
    Hit("transfer.after", 1);
    Hit("", 1);
  });
  EXPECT_TRUE(c.exited_ok()) << c.status;
  EXPECT_EQ(c.stderr_text,
            "passed transfer.after_in_call 1\npassed transfer.after 1\n"
            "passed  1\n");
}

TEST(FaultPointTest, MalformedValueWarnsOnceAndArmsNothing) {
  for (const char* value : {"a@0", "a@x", "a@", "@3", "a@-1"}) {
    Child c = RunChild(value, [] { Hit("a", 2); });
    EXPECT_TRUE(c.exited_ok()) << value << ": " << c.status;
    std::string warning =
        std::string("fault point: ignoring TESSERA_FAULT_POINT=") + value;
    EXPECT_EQ(c.stderr_text.rfind(warning, 0), 0u) << c.stderr_text;
    EXPECT_EQ(c.stderr_text.find("fault point", 1), std::string::npos)
        << c.stderr_text;
    EXPECT_NE(c.stderr_text.find("\npassed a 1\npassed a 2\n"),
              std::string::npos)
        << c.stderr_text;
  }
}

// Threads share one count: exactly the N-th hit fires. With 4 x 250 hits,
// @1000 must fire (a lost increment would let it survive) and @1001 not.
void HitFromThreads() {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 250; ++i) FaultPoint("hot");
    });
  }
  for (std::thread& t : threads) t.join();
  Say("all threads done");
}

TEST(FaultPointTest, HitsFromManyThreadsAreCountedExactly) {
  Child last = RunChild("hot@1000", HitFromThreads);
  EXPECT_TRUE(last.killed_by_sigkill()) << last.status;
  EXPECT_EQ(last.stderr_text, "fault point hot: killing this process\n");

  Child beyond = RunChild("hot@1001", HitFromThreads);
  EXPECT_TRUE(beyond.exited_ok()) << beyond.status;
  EXPECT_EQ(beyond.stderr_text, "all threads done\n");
}

}  // namespace
}  // namespace tessera
