// Test guest "initfail": init always fails with "init failed: <reason>".
//   params   {"reason": string}  default "on purpose"
#include <string>
#include <string_view>
#include <variant>

#include "tessera/shard_sdk.h"

struct Params {
  std::string reason = "on purpose";
};
TESSERA_FIELDS(Params, reason);

struct Noop {};
TESSERA_FIELDS(Noop);

using Input = std::variant<Noop>;

class InitFail {
 public:
  static tessera::Result<InitFail> init(std::string_view, Params params) {
    return tessera::Error("init failed: " + params.reason);
  }

  tessera::Status apply_input(std::string_view, Input) {
    return tessera::Status();
  }

  void tick(double) {}

  bool snapshot() const { return false; }
};

TESSERA_SHARD(InitFail);
