// Native tests of TESSERA_SHARD: drives small shards through the exported
// ABI functions exactly as the host does (allocate, write, call, read the
// output buffer), with 64-bit pointers standing in for guest addresses.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "guest_calls.h"
#include "tessera/shard_sdk.h"

namespace export_test {

struct Params {
  std::int64_t start = 0;
};
TESSERA_FIELDS(Params, start);

struct Add {
  std::int64_t n = 0;
};
TESSERA_FIELDS(Add, n);
struct Finish {};
TESSERA_FIELDS(Finish);
using Input = std::variant<Add, Finish>;

struct State {
  std::int64_t value = 0;
  std::int64_t ticks = 0;
  std::string last_sid;
};
TESSERA_FIELDS(State, value, ticks, last_sid);

// Saves and restores a typed State; logs each tick.
class Counter {
 public:
  static tessera::Result<Counter> init(std::string_view id, Params p) {
    if (id == "refuse") return tessera::Error("refused " + std::string(id));
    Counter c;
    c.state_.value = p.start;
    return c;
  }
  tessera::Status apply_input(std::string_view sid, Input in) {
    if (const Add* add = std::get_if<Add>(&in)) {
      if (add->n <= 0) return tessera::Error("n must be positive");
      state_.value += add->n;
    } else {
      tessera::finish("done");
    }
    state_.last_sid = std::string(sid);
    return tessera::Status();
  }
  void tick(double dt_seconds) {
    ++state_.ticks;
    tessera::log_info("tick " + std::to_string(state_.ticks) + " dt " +
                      std::to_string(dt_seconds));
  }
  State snapshot() const { return state_; }
  State save() const { return state_; }
  static tessera::Result<Counter> restore(std::string_view, Params,
                                          State state) {
    Counter c;
    c.state_ = std::move(state);
    return c;
  }

 private:
  State state_;
};

// Raw-bytes save with "nothing yet" before the first tick; chrono tick.
class RawSaver {
 public:
  static tessera::Result<RawSaver> init(std::string_view, Params) {
    return RawSaver();
  }
  tessera::Status apply_input(std::string_view, Finish) {
    return tessera::Status();
  }
  void tick(std::chrono::microseconds dt) { total_ += dt; }
  std::int64_t snapshot() const { return total_.count(); }
  tessera::Result<std::optional<std::string>> save() const {
    if (total_.count() == 0) return std::optional<std::string>();
    if (total_.count() < 0) return tessera::Error("negative time");
    return std::optional<std::string>("raw:" + std::to_string(total_.count()));
  }
  static tessera::Result<RawSaver> restore(std::string_view, Params,
                                           std::string_view bytes) {
    if (bytes.substr(0, 4) != "raw:") return tessera::Error("not mine");
    RawSaver s;
    s.total_ =
        std::chrono::microseconds(std::stoll(std::string(bytes.substr(4))));
    return s;
  }

 private:
  std::chrono::microseconds total_{0};
};

// No save/restore at all.
class Minimal {
 public:
  static tessera::Result<Minimal> init(std::string_view, Params) {
    return Minimal();
  }
  tessera::Status apply_input(std::string_view, Finish) {
    return tessera::Status();
  }
  void tick(double) {}
  bool snapshot() const { return true; }
};

}  // namespace export_test

TESSERA_SHARD(export_test::Counter);
TESSERA_SHARD(export_test::RawSaver);
TESSERA_SHARD(export_test::Minimal);

namespace export_test {

using tessera::detail::Exports;
using tessera::detail::GuestLen;
using tessera::detail::GuestPtr;
using tessera::detail::RestoreExport;
using tessera::detail::SaveExport;

constexpr int kJson = tessera::abi::kCodecJson;
constexpr int kMsgpack = tessera::abi::kCodecMsgpack;

// What the host does with an argument (sdk_test::Arg).
using Arg = sdk_test::Arg<Counter>;
std::string Output() { return sdk_test::Output<Counter>(); }
using sdk_test::Init;

template <class S>
int Restore(int codec, std::string_view params, std::string_view state) {
  const Arg a("id"), b(params), c(state);
  return RestoreExport<S>::restore(codec, a.ptr, a.len, b.ptr, b.len, c.ptr,
                                   c.len);
}

template <class S>
int Apply(std::string_view sid, std::string_view input) {
  const Arg a(sid), b(input);
  return Exports<S>::apply_input(a.ptr, a.len, b.ptr, b.len);
}

template <class S>
constexpr bool kExportsSave = requires {
  &SaveExport<S>::save;
};
template <class S>
constexpr bool kExportsRestore = requires {
  &RestoreExport<S>::restore;
};

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Exports<Counter>::reset_for_testing();
    Exports<RawSaver>::reset_for_testing();
    Exports<Minimal>::reset_for_testing();
    previous_sink_ = tessera::native::set_log_sink(
        [this](tessera::LogLevel level, std::string_view text) {
          logs_.push_back(std::to_string(level) + ":" + std::string(text));
        });
  }
  void TearDown() override {
    tessera::native::set_log_sink(std::move(previous_sink_));
  }

  std::vector<std::string> logs_;
  tessera::native::LogSink previous_sink_;
};

TEST_F(ExportTest, RunsACounterInJson) {
  ASSERT_EQ(Init<Counter>(kJson, "c1", R"({"start":5})"), tessera::abi::kOk)
      << Output();
  EXPECT_EQ(Apply<Counter>("ann", R"({"add":{"n":2}})"), tessera::abi::kOk);
  EXPECT_EQ(Apply<Counter>("bob", R"({"add":{"n":0}})"), tessera::abi::kError);
  EXPECT_EQ(Output(), "n must be positive");
  EXPECT_EQ(Apply<Counter>("bob", R"({"add":{"n":"two"}})"),
            tessera::abi::kError);
  EXPECT_EQ(Output(),
            "invalid input: field \"add.n\": expected an integer, found a "
            "string");
  EXPECT_EQ(Apply<Counter>("bob", "{"), tessera::abi::kError);
  EXPECT_EQ(Output(),
            "invalid input: malformed JSON at byte 1: unexpected "
            "end of input");

  EXPECT_EQ(Exports<Counter>::tick(50000), tessera::abi::kOk);
  EXPECT_EQ(Output(), "");
  EXPECT_EQ(logs_, std::vector<std::string>{"1:tick 1 dt 0.050000"});
  EXPECT_EQ(Exports<Counter>::snapshot(), tessera::abi::kOk);
  EXPECT_EQ(Output(), R"({"value":7,"ticks":1,"last_sid":"ann"})");
}

TEST_F(ExportTest, FinishEndsAtTheNextTick) {
  ASSERT_EQ(Init<Counter>(kMsgpack, "c1", ""), tessera::abi::kOk);
  EXPECT_EQ(Apply<Counter>("",
                           "\x81\xa6"
                           "finish\x80"),
            tessera::abi::kOk);
  EXPECT_EQ(Exports<Counter>::tick(1000), tessera::abi::kFinished);
  EXPECT_EQ(Output(), "done");
  // The shard's own tick did not run once it had finished.
  EXPECT_TRUE(logs_.empty());
  EXPECT_EQ(Exports<Counter>::tick(1000), tessera::abi::kFinished);
}

TEST_F(ExportTest, InitReportsBadCodecParamsAndRefusals) {
  EXPECT_EQ(Init<Counter>(7, "c1", ""), tessera::abi::kError);
  EXPECT_EQ(Output(), "unknown codec 7");
  EXPECT_EQ(Init<Counter>(kJson, "c1", R"({"start":"x"})"),
            tessera::abi::kError);
  EXPECT_EQ(Output(),
            "invalid params: field \"start\": expected an integer, "
            "found a string");
  EXPECT_EQ(Init<Counter>(kJson, "refuse", ""), tessera::abi::kError);
  EXPECT_EQ(Output(), "refused refuse");
  ASSERT_EQ(Init<Counter>(kJson, "c1", ""), tessera::abi::kOk);
  EXPECT_EQ(Init<Counter>(kJson, "c1", ""), tessera::abi::kError);
  EXPECT_EQ(Output(), "the shard has already started");
}

TEST_F(ExportTest, SavesAndRestoresTypedState) {
  ASSERT_EQ(Init<Counter>(kJson, "c1", R"({"start":40})"), tessera::abi::kOk);
  ASSERT_EQ(Apply<Counter>("ann", R"({"add":{"n":2}})"), tessera::abi::kOk);
  ASSERT_EQ(SaveExport<Counter>::save(), tessera::abi::kOk);
  const std::string saved = Output();
  State decoded;
  ASSERT_TRUE(
      tessera::decode(tessera::abi::kCodecMsgpack, saved, decoded).ok());
  EXPECT_EQ(decoded.value, 42);

  Exports<Counter>::reset_for_testing();
  EXPECT_EQ(Restore<Counter>(kJson, "", "\xc1"), tessera::abi::kError);
  EXPECT_EQ(Output(),
            "invalid saved state: malformed MessagePack at byte 0: "
            "invalid type byte");
  ASSERT_EQ(Restore<Counter>(kJson, "", saved), tessera::abi::kOk) << Output();
  EXPECT_EQ(Exports<Counter>::snapshot(), tessera::abi::kOk);
  EXPECT_EQ(Output(), R"({"value":42,"ticks":0,"last_sid":"ann"})");
}

TEST_F(ExportTest, SavesRawBytesAndReportsNothingToSave) {
  ASSERT_EQ(Init<RawSaver>(kMsgpack, "r", ""), tessera::abi::kOk);
  EXPECT_EQ(SaveExport<RawSaver>::save(), tessera::abi::kNoState);
  EXPECT_EQ(Exports<RawSaver>::tick(-5), tessera::abi::kOk);  // counts as 0
  EXPECT_EQ(SaveExport<RawSaver>::save(), tessera::abi::kNoState);
  EXPECT_EQ(Exports<RawSaver>::tick(1500), tessera::abi::kOk);
  EXPECT_EQ(SaveExport<RawSaver>::save(), tessera::abi::kOk);
  EXPECT_EQ(Output(), "raw:1500");

  Exports<RawSaver>::reset_for_testing();
  EXPECT_EQ(Restore<RawSaver>(kMsgpack, "", "junk"), tessera::abi::kError);
  EXPECT_EQ(Output(), "not mine");
  ASSERT_EQ(Restore<RawSaver>(kMsgpack, "", "raw:1500"), tessera::abi::kOk);
  EXPECT_EQ(Exports<RawSaver>::snapshot(), tessera::abi::kOk);
  EXPECT_EQ(Output(), "\xcd\x05\xdc");  // 1500 as uint16
}

TEST_F(ExportTest, SaveAndRestoreAreOnlyExportedWhenDefined) {
  static_assert(kExportsSave<Counter> && kExportsRestore<Counter>);
  static_assert(!kExportsSave<Minimal> && !kExportsRestore<Minimal>);
  ASSERT_EQ(Init<Minimal>(kJson, "m", ""), tessera::abi::kOk);
  EXPECT_EQ(Exports<Minimal>::snapshot(), tessera::abi::kOk);
  EXPECT_EQ(Output(), "true");
}

TEST_F(ExportTest, LogLevelsAreCappedBelowPanic) {
  tessera::log(tessera::abi::kLogPanic, "not a panic");
  tessera::log_debug("d");
  EXPECT_EQ(logs_, (std::vector<std::string>{"3:not a panic", "0:d"}));
}

TEST(ExportDeathTest, CallsBeforeInitPanic) {
  Exports<Minimal>::reset_for_testing();
  EXPECT_DEATH(Exports<Minimal>::tick(1),
               "tessera_tick called before tessera_init");
}

}  // namespace export_test
