// Test guest "logger": exercises every log path.
//   tick     logs "tick N" at debug, info, warn and error, and prints
//            "stdout tick N" with printf (becomes an info line)
//   inputs   {"log": {"level": int, "text": string}} logs text at level
//            (levels above 3 are logged at 3)
//   snapshot {"ticks": int}
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <variant>

#include "tessera/shard_sdk.h"

struct Params {};
TESSERA_FIELDS(Params);

struct Log {
  std::int32_t level = 1;
  std::string text;
};
TESSERA_FIELDS(Log, level, text);

using Input = std::variant<Log>;

struct Snapshot {
  std::int64_t ticks = 0;
};
TESSERA_FIELDS(Snapshot, ticks);

class Logger {
 public:
  static tessera::Result<Logger> init(std::string_view, Params) {
    return Logger();
  }

  tessera::Status apply_input(std::string_view, Input input) {
    const Log& log = std::get<Log>(input);
    if (log.level < 0) return tessera::Error("level must be 0 to 3");
    tessera::log(static_cast<tessera::LogLevel>(log.level), log.text);
    return tessera::Status();
  }

  void tick(double) {
    ++ticks_;
    const std::string text = "tick " + std::to_string(ticks_);
    tessera::log_debug(text);
    tessera::log_info(text);
    tessera::log_warn(text);
    tessera::log_error(text);
    std::printf("stdout %s\n", text.c_str());
  }

  Snapshot snapshot() const { return Snapshot{ticks_}; }

 private:
  std::int64_t ticks_ = 0;
};

TESSERA_SHARD(Logger);
