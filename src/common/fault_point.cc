#include "common/fault_point.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace tessera {
namespace {

struct Armed {
  bool armed = false;
  std::string name;
  uint64_t nth = 1;
  std::atomic<uint64_t> hits{0};
};

// Writes all of `text` to stderr with write(2): no stdio buffer can hold it
// back from a process about to be killed.
void WriteStderr(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = write(STDERR_FILENO, text.data(), text.size());
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// "name" or "name@N"; false (with `why`) for a malformed count.
bool Parse(std::string_view value, Armed& out, std::string& why) {
  size_t at = value.rfind('@');
  out.name = std::string(value.substr(0, at));
  if (out.name.empty()) {
    why = "empty name";
    return false;
  }
  if (at == std::string_view::npos) {
    out.nth = 1;
    return true;
  }
  std::string_view count = value.substr(at + 1);
  if (count.empty() || count.size() > 18) {
    why = "the count after '@' must be 1 to 18 digits";
    return false;
  }
  uint64_t n = 0;
  for (char c : count) {
    if (c < '0' || c > '9') {
      why = "the count after '@' must be digits";
      return false;
    }
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n == 0) {
    why = "the count after '@' is 1-based";
    return false;
  }
  out.nth = n;
  return true;
}

Armed& Config() {
  static Armed* config = [] {
    auto* c = new Armed();  // never destroyed: may be hit during exit
    const char* value = getenv(kFaultPointEnv);
    if (value == nullptr || *value == '\0') return c;
    std::string why;
    if (Parse(value, *c, why)) {
      c->armed = true;
    } else {
      WriteStderr(std::string("fault point: ignoring ") + kFaultPointEnv + "=" +
                  value + ": " + why + "\n");
    }
    return c;
  }();
  return *config;
}

}  // namespace

void FaultPoint(std::string_view name) {
  Armed& config = Config();
  if (!config.armed || name != config.name) return;
  uint64_t hit = config.hits.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (hit != config.nth) return;
  WriteStderr("fault point " + std::string(name) + ": killing this process\n");
  raise(SIGKILL);
}

}  // namespace tessera
