// Test guest "calls": keyed calls and entity writes through the C++ SDK's
// hooks (calls(), on_call_result(), writes()), for the host's tests.
// Deterministic.
//   params   {"no_calls": bool}   true: calls() lists nothing (the module
//                                  still exports the hooks)
//   inputs   {"call": {"key": str, "function": str, "args": str}}
//              waits for this call (args: JSON text, "" = null) until its
//              result comes
//            {"write": {"entity": str, "id": str, "set": str}}
//              queues a write (set: a JSON object's text) for the next
//              writes()
//            {"finish": {}}   finishes at the next tick ("done")
//            {"panic": {}}    panics "boom in apply_input"
//            {"record": {}}   the next on_call_result also queues a write
//                              of row "Result" <key>: {"ok": bool}
//   Every hook and input is recorded in `events`, in order:
//     "input:<subscriber>:<call|write|finish|record>", "tick",
//     "result:<key>:ok:<result_json>" or "result:<key>:error:<error>".
//   snapshot {"waiting": [key...], "events": [str...] (the last 64),
//             "ticks": uint}
//   save/restore: the waiting calls and the events (MessagePack): a
//   restored shard lists the calls it waited for again.
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/shard_sdk.h"

struct Params {
  bool no_calls = false;
};
TESSERA_FIELDS(Params, no_calls);

struct Call {
  std::string key;
  std::string function;
  std::string args;
};
TESSERA_FIELDS(Call, key, function, args);
struct Write {
  std::string entity;
  std::string id;
  std::string set;
};
TESSERA_FIELDS(Write, entity, id, set);
struct Finish {};
TESSERA_FIELDS(Finish);
struct Panic {};
TESSERA_FIELDS(Panic);
struct Record {};
TESSERA_FIELDS(Record);
using Input = std::variant<Call, Write, Finish, Panic, Record>;

struct Waiting {
  std::string key;
  std::string function;
  std::string args;
};
TESSERA_FIELDS(Waiting, key, function, args);

struct Snapshot {
  std::vector<std::string> waiting;
  std::vector<std::string> events;
  std::uint64_t ticks = 0;
};
TESSERA_FIELDS(Snapshot, waiting, events, ticks);

struct Saved {
  std::vector<Waiting> waiting;
  std::vector<std::string> events;
  std::uint64_t ticks = 0;
};
TESSERA_FIELDS(Saved, waiting, events, ticks);

constexpr std::size_t kEventsKept = 64;

class Calls {
 public:
  static tessera::Result<Calls> init(std::string_view, Params params) {
    Calls calls;
    calls.params_ = params;
    return calls;
  }

  static tessera::Result<Calls> restore(std::string_view, Params params,
                                        Saved saved) {
    Calls calls;
    calls.params_ = params;
    calls.waiting_ = std::move(saved.waiting);
    calls.events_.assign(saved.events.begin(), saved.events.end());
    calls.ticks_ = saved.ticks;
    calls.Note("restored");
    return calls;
  }

  tessera::Status apply_input(std::string_view sid, Input input) {
    std::string what;
    if (Call* call = std::get_if<Call>(&input)) {
      what = "call";
      waiting_.push_back({std::move(call->key), std::move(call->function),
                          call->args.empty() ? "null" : call->args});
    } else if (Write* write = std::get_if<Write>(&input)) {
      what = "write";
      writes_.push_back({std::move(write->entity), std::move(write->id),
                         std::move(write->set)});
    } else if (std::holds_alternative<Finish>(input)) {
      what = "finish";
      finish_ = true;
    } else if (std::holds_alternative<Panic>(input)) {
      tessera::panic("boom in apply_input");
    } else {
      what = "record";
      write_result_ = true;
    }
    Note("input:" + std::string(sid) + ":" + what);
    return tessera::Status();
  }

  void tick(double) {
    ++ticks_;
    Note("tick");
    if (finish_) tessera::finish("done");
  }

  Snapshot snapshot() const {
    Snapshot s;
    for (const Waiting& w : waiting_) s.waiting.push_back(w.key);
    s.events.assign(events_.begin(), events_.end());
    s.ticks = ticks_;
    return s;
  }

  std::vector<tessera::Call> calls() {
    std::vector<tessera::Call> list;
    if (params_.no_calls) return list;
    for (const Waiting& w : waiting_) {
      list.push_back({w.key, w.function, w.args});
    }
    return list;
  }

  void on_call_result(std::string_view key,
                      const tessera::CallOutcome& outcome) {
    Note("result:" + std::string(key) +
         (outcome.ok ? ":ok:" + std::string(outcome.result_json)
                     : ":error:" + std::string(outcome.error)));
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if (it->key == key) {
        waiting_.erase(it);
        break;
      }
    }
    if (write_result_) {
      write_result_ = false;
      writes_.push_back({"Result", std::string(key),
                         outcome.ok ? R"({"ok":true})" : R"({"ok":false})"});
    }
  }

  std::vector<tessera::Write> writes() {
    std::vector<tessera::Write> out = std::move(writes_);
    writes_.clear();
    return out;
  }

  Saved save() const {
    Saved saved;
    saved.waiting = waiting_;
    saved.events.assign(events_.begin(), events_.end());
    saved.ticks = ticks_;
    return saved;
  }

 private:
  void Note(std::string event) {
    events_.push_back(std::move(event));
    while (events_.size() > kEventsKept) events_.pop_front();
  }

  Params params_;
  std::vector<Waiting> waiting_;
  std::vector<tessera::Write> writes_;
  std::deque<std::string> events_;
  std::uint64_t ticks_ = 0;
  bool finish_ = false;
  bool write_result_ = false;
};

TESSERA_SHARD(Calls);
