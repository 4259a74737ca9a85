#include "replication/fixture_scenarios.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>

#include "replication/bit_io.h"
#include "replication/testing/guest_store.h"

namespace tessera::replication {

Status FixtureRecorder::Frame(uint64_t tick,
                              std::optional<std::vector<uint64_t>> visible,
                              std::optional<Focus> focus, bool record) {
  TESSERA_RETURN_IF_ERROR(mirror_.Apply(store_.TakeChanges(), tick));
  if (history_ != nullptr) history_->RecordWorld(mirror_, tick);
  std::vector<uint64_t> ids =
      visible
          ? *visible
          : std::vector<uint64_t>(mirror_.ids().begin(), mirror_.ids().end());
  std::string payload;
  stream_.Encode(mirror_, ids, focus, tick, payload);
  if (history_ != nullptr) history_->RecordSent(kSubscriber, stream_, tick);
  TESSERA_RETURN_IF_ERROR(check_.Apply(payload));
  std::string diff = testing::CompareWithHeld(check_, stream_.held(), mirror_);
  if (!diff.empty())
    return Internal("fixture tick " + std::to_string(tick) + ": " + diff);
  if (record) frames_.push_back(FixtureFrame{tick, payload});
  return Status::Ok();
}

bool FixtureRecorder::Converged() const {
  return testing::CompareWithMirror(check_, mirror_, mirror_.ids()).empty();
}

namespace {

using testing::GuestStore;

Result<FixtureScenario> Basic() {
  FixtureRecorder r(Config{0.01, 0, false});
  GuestStore& s = r.store();
  s.Spawn(1);
  s.Move(1, 1.25, -3.5, 0);
  s.SetComponent(1, 1, "hp=10");
  s.SetComponent(1, 2, std::string("\x00\x01", 2));
  s.Spawn(2);
  s.Move(2, 10, 10, 2);
  s.Spawn(3);
  s.SetComponent(3, 7, "abc");
  TESSERA_RETURN_IF_ERROR(r.Frame(1, std::nullopt));
  s.Move(1, 1.30, -3.5, 0);      // x only
  s.Move(2, 10.5, 9.75, 2);      // x and y
  s.SetComponent(3, 7, "abcd");  // component only
  TESSERA_RETURN_IF_ERROR(r.Frame(2, std::nullopt));
  s.Spawn(1000);
  s.Move(1000, 5, 5, 5);
  s.SetComponent(1000, 1, "new");
  s.RemoveComponent(1, 2);
  s.Move(3, 0, 0, 0.5);
  TESSERA_RETURN_IF_ERROR(r.Frame(3, std::nullopt));
  TESSERA_RETURN_IF_ERROR(r.Frame(4, std::nullopt));  // nothing changed
  s.Remove(2);
  s.Move(1, 1.31, -3.49, 0.01);
  s.SetComponent(1000, 1, "");
  TESSERA_RETURN_IF_ERROR(r.Frame(5, std::nullopt));
  s.Move(1, -250.5, 1e3, -0.02);
  s.Move(3, 0.004, 0, 0.5);  // below precision / 2: no change
  s.Move(1000, 5.07, 4.93, 5);
  s.SetComponent(3, 255, std::string(40, '\x5a'));
  TESSERA_RETURN_IF_ERROR(r.Frame(6, std::nullopt));
  return FixtureScenario{
      "basic",
      "precision 0.01, z up, no budget: spawns with components, moves on "
      "some axes, component set/change/remove, an empty frame, a despawn",
      r.TakeFrames()};
}

Result<FixtureScenario> Reuse() {
  FixtureRecorder r(Config{0.05, 0, false});
  GuestStore& s = r.store();
  for (uint64_t id = 1; id <= 5; ++id) {
    s.Spawn(id);
    s.Move(id, id * 2.0, -1.0 * id, 0);
  }
  TESSERA_RETURN_IF_ERROR(r.Frame(1, std::nullopt));
  s.Remove(3);  // removed and reused in one tick
  s.Spawn(3);
  s.Move(3, 40, 40, 0);
  s.SetComponent(3, 4, "second life");
  s.Move(4, 8.5, -4, 0);
  TESSERA_RETURN_IF_ERROR(r.Frame(2, std::nullopt));
  s.Move(1, 2.5, -1, 0);
  TESSERA_RETURN_IF_ERROR(r.Frame(3, std::vector<uint64_t>{1, 2, 3}));
  s.Move(4, 9, -4, 0);  // not visible: arrives with the spawn
  TESSERA_RETURN_IF_ERROR(r.Frame(4, std::vector<uint64_t>{1, 2, 3}));
  s.Remove(1);
  s.Spawn(1);
  s.Remove(5);
  TESSERA_RETURN_IF_ERROR(r.Frame(5, std::nullopt));  // 4 re-enters
  s.Remove(2);  // reused with the same state: still left and entered
  s.Spawn(2);
  s.Move(2, 4, -2, 0);
  TESSERA_RETURN_IF_ERROR(r.Frame(6, std::nullopt));
  return FixtureScenario{
      "reuse",
      "precision 0.05: ids removed and reused in one tick (in both left and "
      "entered, even with the same state), entities leaving and re-entering "
      "the visible set",
      r.TakeFrames()};
}

Result<FixtureScenario> Budget() {
  FixtureRecorder r(Config{0.001, 100, false});
  GuestStore& s = r.store();
  testing::Rng rng(2024);
  for (uint64_t id = 0; id < 40; ++id) {
    s.Spawn(id);
    s.Move(id, (id % 8) * 4.0, (id / 8) * 4.0, 0);
  }
  const Focus focus{0, 0, 20};
  TESSERA_RETURN_IF_ERROR(r.Frame(1, std::nullopt, focus));  // all spawns
  uint64_t tick = 2;
  for (; tick <= 6; ++tick) {
    for (const auto& [id, e] : std::map(s.entities())) {
      s.Move(id, e.position[0] + (rng.Uniform() * 2 - 1) * 3,
             e.position[1] + (rng.Uniform() * 2 - 1) * 3, 0);
    }
    TESSERA_RETURN_IF_ERROR(r.Frame(tick, std::nullopt, focus));
  }
  // Changes stop: the deferred updates drain.
  for (; !r.Converged(); ++tick) {
    if (tick > 30) return Internal("budget fixture did not converge");
    TESSERA_RETURN_IF_ERROR(r.Frame(tick, std::nullopt, focus));
  }
  TESSERA_RETURN_IF_ERROR(r.Frame(tick, std::nullopt, focus));
  return FixtureScenario{
      "budget",
      "precision 0.001, budget 100 bytes, focus (0, 0) radius 20: 40 "
      "entities spawned at once (spawns always go), five ticks of moves with "
      "deferral, then no changes until the client holds the exact state",
      r.TakeFrames()};
}

Result<FixtureScenario> YUp() {
  FixtureRecorder r(Config{0.02, 0, true});
  GuestStore& s = r.store();
  s.Spawn(1);
  s.Move(1, 1, 0.5, 2);
  s.Spawn(2);
  s.Move(2, -3, 0, -4);
  TESSERA_RETURN_IF_ERROR(r.Frame(1, std::nullopt));
  s.Move(1, 1.2, 0.5, 2.3);
  s.Move(2, -3.1, 0, -4.1);
  TESSERA_RETURN_IF_ERROR(r.Frame(2, std::nullopt));
  s.Move(1, 1.2, 3.5, 2.3);  // a jump
  TESSERA_RETURN_IF_ERROR(r.Frame(3, std::nullopt));
  s.Remove(1);
  s.SetComponent(2, 9, "up");
  TESSERA_RETURN_IF_ERROR(r.Frame(4, std::nullopt));
  return FixtureScenario{"y_up",
                         "precision 0.02, y up (flags bit 1 on every payload)",
                         r.TakeFrames()};
}

Result<FixtureScenario> LateJoin() {
  FixtureRecorder r(Config{0.01, 0, false});
  GuestStore& s = r.store();
  testing::Rng rng(77);
  testing::RandomOptions options;
  options.max_id = 12;
  for (uint64_t tick = 1; tick <= 9; ++tick) {
    testing::RandomTick(s, rng, options);
    if (tick == 7) r.stream().Reset();  // the server sends a baseline
    TESSERA_RETURN_IF_ERROR(
        r.Frame(tick, std::nullopt, std::nullopt, /*record=*/tick >= 4));
  }
  return FixtureScenario{
      "late_join",
      "precision 0.01: the client starts listening at tick 4, in the middle "
      "of a stream: it ignores frames until the baseline of tick 7",
      r.TakeFrames()};
}

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out.push_back(kDigits[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kDigits[static_cast<uint8_t>(c) & 15]);
  }
  return out;
}

}  // namespace

Result<std::vector<FixtureScenario>> BuildFixtureScenarios() {
  std::vector<FixtureScenario> out;
  for (auto build : {Basic, Reuse, Budget, YUp, LateJoin}) {
    Result<FixtureScenario> s = build();
    if (!s.ok()) return s.status();
    out.push_back(std::move(s).value());
  }
  return out;
}

std::string FramesBin(const FixtureScenario& s) {
  std::string out;
  for (const FixtureFrame& f : s.frames) {
    PutU64(out, f.tick);
    PutU32(out, static_cast<uint32_t>(f.payload.size()));
    out += f.payload;
  }
  return out;
}

Result<std::string> FixtureJson(const FixtureScenario& s) {
  // One frame header per line and one entity per line: small diffs.
  using nlohmann::ordered_json;
  std::string out = "{\"name\":" + ordered_json(s.name).dump() +
                    ",\"description\":" + ordered_json(s.description).dump() +
                    ",\"frames\":[\n";
  Decoder d;
  for (size_t i = 0; i < s.frames.size(); ++i) {
    const FixtureFrame& f = s.frames[i];
    Status st = d.Apply(f.payload);
    const bool ignored = Decoder::Ignored(st);
    if (!st.ok() && !ignored) {
      return Internal(s.name + " tick " + std::to_string(f.tick) + ": " +
                      st.message());
    }
    ordered_json head{{"tick", f.tick},
                      {"payload_hex", Hex(f.payload)},
                      {"ignored", ignored},
                      {"entered", d.entered()},
                      {"left", d.left()}};
    std::string line = head.dump();
    line.pop_back();  // the closing brace
    out += line + ",\"entities\":[";
    for (size_t j = 0; j < d.entities().size(); ++j) {
      const DecodedEntity& e = d.entities()[j];
      ordered_json components = ordered_json::object();
      for (const DecodedComponent& c : e.components) {
        components[std::to_string(c.id)] = Hex(c.bytes);
      }
      ordered_json entity{{"id", e.id},
                          {"x", d.Coordinate(e, 0)},
                          {"y", d.Coordinate(e, 1)},
                          {"z", d.Coordinate(e, 2)},
                          {"q", ordered_json::array({e.q[0], e.q[1], e.q[2]})},
                          {"components", components}};
      out += "\n " + entity.dump() + (j + 1 < d.entities().size() ? "," : "");
    }
    out += "]}";
    out += i + 1 < s.frames.size() ? ",\n" : "\n";
  }
  out += "]}\n";
  return out;
}

std::vector<std::pair<std::string, std::string>> ChangeListSeeds() {
  // Each seed is a sequence of change lists, each as u32 LE length + bytes.
  std::vector<std::pair<std::string, std::string>> out;
  for (uint64_t seed : {1, 2, 3}) {
    testing::Rng rng(seed);
    GuestStore store;
    testing::RandomOptions options;
    options.max_id = 10 + seed * 5;
    std::string bytes;
    for (int tick = 0; tick < 4; ++tick) {
      testing::RandomTick(store, rng, options);
      const std::string list = store.TakeChanges();
      PutU32(bytes, static_cast<uint32_t>(list.size()));
      bytes += list;
    }
    out.emplace_back("random_" + std::to_string(seed), bytes);
  }
  GuestStore store;
  store.Spawn(7);
  store.Move(7, 1.5, 2.5, -3.5);
  store.SetComponent(7, 1, "hp");
  std::string one = store.TakeChanges();
  std::string bytes;
  PutU32(bytes, static_cast<uint32_t>(one.size()));
  bytes += one;
  store.Remove(7);
  store.Spawn(7);
  one = store.TakeChanges();
  PutU32(bytes, static_cast<uint32_t>(one.size()));
  bytes += one;
  out.emplace_back("reuse", bytes);
  return out;
}

std::vector<std::pair<std::string, std::string>> PayloadSeeds() {
  // Each seed is a sequence of payloads, each as u32 LE length + bytes.
  std::vector<std::pair<std::string, std::string>> out;
  Result<std::vector<FixtureScenario>> all = BuildFixtureScenarios();
  if (!all.ok()) return out;
  for (const FixtureScenario& s : *all) {
    std::string bytes;
    for (const FixtureFrame& f : s.frames) {
      PutU32(bytes, static_cast<uint32_t>(f.payload.size()));
      bytes += f.payload;
    }
    out.emplace_back(s.name, bytes);
  }
  return out;
}

}  // namespace tessera::replication
