#include "replication/lagcomp_fixtures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "replication/testing/guest_store.h"

namespace tessera::replication {
namespace {

using testing::GuestStore;

constexpr uint32_t kHistoryTicks = 10;

// A FixtureRecorder with a history, and the queries drawn from it.
class Run {
 public:
  explicit Run(Config config) : history_(kHistoryTicks), r_(config, &history_) {
    precision_ = config.precision;
  }

  GuestStore& store() { return r_.store(); }
  FixtureRecorder& recorder() { return r_; }
  const SentHistory& history() const { return history_; }

  Status Frame(uint64_t tick,
               std::optional<std::vector<uint64_t>> visible = std::nullopt,
               std::optional<Focus> focus = std::nullopt) {
    return r_.Frame(tick, std::move(visible), focus);
  }

  // What the client drew at `view` (inside the clamp range: checked).
  Status Query(double view) {
    std::optional<DrawnPicture> p =
        history_.Draw(FixtureRecorder::kSubscriber, view, std::nullopt);
    if (!p) return Internal("nothing recorded");
    if (p->view_tick != view) {
      return Internal("view tick " + std::to_string(view) +
                      " is outside the clamp range");
    }
    for (const LagcompQuery& q : queries_) {
      if (q.view_tick == view) return Status::Ok();  // drawn already
    }
    queries_.push_back(LagcompQuery{view, std::move(p->entities)});
    return Status::Ok();
  }
  // Queries at tick - 1 + each fraction, after the frame of `tick`.
  Status QueryBefore(uint64_t tick, std::initializer_list<double> fractions) {
    for (double f : fractions) {
      TESSERA_RETURN_IF_ERROR(Query(static_cast<double>(tick) - 1 + f));
    }
    return Status::Ok();
  }

  LagcompScenario Take(std::string name, std::string description) {
    std::sort(queries_.begin(), queries_.end(),
              [](const LagcompQuery& a, const LagcompQuery& b) {
                return a.view_tick < b.view_tick;
              });
    return LagcompScenario{
        FixtureScenario{std::move(name), std::move(description),
                        r_.TakeFrames()},
        precision_, std::move(queries_)};
  }

 private:
  SentHistory history_;
  FixtureRecorder r_;
  double precision_ = 0;
  std::vector<LagcompQuery> queries_;
};

Result<LagcompScenario> Moving() {
  Run run(Config{0.01, 0, false});
  GuestStore& s = run.store();
  struct Mover {
    uint64_t id;
    double p[3];
    double v[3];
  };
  std::vector<Mover> movers = {{1, {0, 0, 0}, {0.37, 0, 0}},
                               {2, {5, 5, 0}, {-0.13, 0.29, 0}},
                               {3, {-2, 1, 4}, {0.05, -0.07, 0.11}},
                               {4, {12.34, -5.6, 0}, {0, 0, 0}},
                               {5, {-7.5, -7.5, 2}, {1.01, 1.01, -0.5}}};
  for (uint64_t tick = 1; tick <= 14; ++tick) {
    if (tick == 6) movers.push_back({9, {3, 3, 3}, {0.2, 0, 0}});
    if (tick == 10) {
      s.Remove(2);
      std::erase_if(movers, [](const Mover& m) { return m.id == 2; });
    }
    for (Mover& m : movers) {
      if (!s.Holds(m.id)) s.Spawn(m.id);
      for (int a = 0; a < 3; ++a) m.p[a] += m.v[a];
      s.Move(m.id, m.p[0], m.p[1], m.p[2]);
    }
    TESSERA_RETURN_IF_ERROR(run.Frame(tick));
    if (tick > 1) {
      TESSERA_RETURN_IF_ERROR(run.QueryBefore(tick, {0.1, 0.25, 0.5, 0.9}));
    }
  }
  TESSERA_RETURN_IF_ERROR(run.Query(4));  // 14 - history_ticks
  TESSERA_RETURN_IF_ERROR(run.Query(4.375));
  TESSERA_RETURN_IF_ERROR(run.Query(14));
  return run.Take(
      "moving",
      "precision 0.01, no budget: five entities moving in 3-D at constant "
      "speeds (one still), one spawned at tick 6, one removed at tick 10; "
      "views between every two ticks and at both ends of the history");
}

Result<LagcompScenario> Budget() {
  Run run(Config{0.001, 100, false});
  GuestStore& s = run.store();
  testing::Rng rng(2026);
  for (uint64_t id = 0; id < 40; ++id) {
    s.Spawn(id);
    s.Move(id, (id % 8) * 4.0, (id / 8) * 4.0, 0);
  }
  const Focus focus{0, 0, 20};
  bool deferral_drawn = false;
  for (uint64_t tick = 1; tick <= 16; ++tick) {
    if (tick > 1 && tick <= 10) {
      for (const auto& [id, e] : std::map(s.entities())) {
        s.Move(id, e.position[0] + (rng.Uniform() * 2 - 1) * 3,
               e.position[1] + (rng.Uniform() * 2 - 1) * 3, 0);
      }
    }
    TESSERA_RETURN_IF_ERROR(run.Frame(tick, std::nullopt, focus));
    if (tick > 1) {
      TESSERA_RETURN_IF_ERROR(run.QueryBefore(tick, {0.5, 1}));
    }
    // At the newest tick the client holds old positions of what the
    // budget deferred: the history must show them.
    const Mirror& m = run.recorder().mirror();
    std::optional<DrawnPicture> p = run.history().Draw(
        FixtureRecorder::kSubscriber, static_cast<double>(tick), std::nullopt);
    for (const DrawnEntity& e : p->entities) {
      const MirrorEntity* me = m.Find(e.id);
      if (me != nullptr && (e.x != me->q[0] * m.config().precision ||
                            e.y != me->q[1] * m.config().precision)) {
        deferral_drawn = true;
      }
    }
  }
  if (!deferral_drawn) return Internal("budget fixture deferred nothing");
  if (!run.recorder().Converged()) {
    return Internal("budget fixture did not converge");
  }
  return run.Take(
      "budget",
      "precision 0.001, budget 100 bytes, focus (0, 0) radius 20: 40 "
      "entities spawned at once, nine ticks of random moves (updates "
      "deferred: the client draws the old positions), then still until the "
      "client holds the exact state");
}

Result<LagcompScenario> Interest() {
  Run run(Config{0.05, 0, false});
  GuestStore& s = run.store();
  // The subscriber sees what is within 10 of (0, 0).
  auto visible = [&] {
    std::vector<uint64_t> out;
    for (const auto& [id, e] : s.entities()) {
      const double x = e.position[0];
      const double y = e.position[1];
      if (x * x + y * y <= 100) out.push_back(id);
    }
    return out;
  };
  for (uint64_t id = 1; id <= 4; ++id) s.Spawn(id);
  bool left = false;
  for (uint64_t tick = 1; tick <= 20; ++tick) {
    const double t = static_cast<double>(tick);
    s.Move(1, -14 + 1.5 * t, 0.5, 0);           // crosses left to right
    s.Move(2, 13 - 2 * t, -3, 1);               // right to left, faster
    s.Move(3, 5, 5 + 0.01 * t, 0);              // always seen
    s.Move(4, tick % 3 == 0 ? 11 : 9.5, 0, 0);  // in and out
    TESSERA_RETURN_IF_ERROR(run.Frame(tick, visible()));
    left = left || run.recorder().stream().last().despawns > 0;
    if (tick > 1) {
      TESSERA_RETURN_IF_ERROR(run.QueryBefore(tick, {0.2, 0.5, 0.8, 1}));
    }
  }
  if (!left) return Internal("interest fixture: nothing left the view");
  return run.Take(
      "interest",
      "precision 0.05, the client sees what is within 10 of (0, 0): two "
      "entities crossing the circle (entering and leaving), one always "
      "seen, one leaving and re-entering every third tick");
}

Result<LagcompScenario> Reuse() {
  Run run(Config{0.05, 0, false});
  GuestStore& s = run.store();
  for (uint64_t id = 1; id <= 5; ++id) s.Spawn(id);
  for (uint64_t tick = 1; tick <= 10; ++tick) {
    const double t = static_cast<double>(tick);
    if (tick == 3) {  // removed and reused in one tick, elsewhere
      s.Remove(3);
      s.Spawn(3);
    }
    if (tick == 5) s.Remove(1);
    if (tick == 7) s.Spawn(1);  // reused after two ticks without it
    if (tick == 8) {            // reused in place: still a new entity
      s.Remove(2);
      s.Spawn(2);
    }
    for (uint64_t id = 1; id <= 5; ++id) {
      if (!s.Holds(id)) continue;
      const double base = id == 3 && tick >= 3 ? 40 : 2.0 * id;
      const double y = id == 2 ? 7 : -1.0 * id + 0.5 * t;
      s.Move(id, base + (id == 2 ? 0 : 0.75 * t), y, 0);
    }
    TESSERA_RETURN_IF_ERROR(run.Frame(tick));
    if (tick > 1) {
      TESSERA_RETURN_IF_ERROR(run.QueryBefore(tick, {0.3, 0.5, 1}));
    }
  }
  return run.Take(
      "reuse",
      "precision 0.05: id 3 removed and reused in one tick at another place, "
      "id 1 removed at tick 5 and reused at tick 7, id 2 removed and reused "
      "in place at tick 8: a new entity is never interpolated from the old");
}

void AppendDouble(std::string& out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  out += buf;
}

}  // namespace

Result<std::vector<LagcompScenario>> BuildLagcompScenarios() {
  std::vector<LagcompScenario> out;
  for (auto build : {Moving, Budget, Interest, Reuse}) {
    Result<LagcompScenario> s = build();
    if (!s.ok()) {
      return Internal("lagcomp fixture: " + s.status().message());
    }
    out.push_back(std::move(s).value());
  }
  return out;
}

std::string LagcompJson(const LagcompScenario& s) {
  using nlohmann::json;
  std::string out = "{\"name\":" + json(s.frames.name).dump() +
                    ",\"description\":" + json(s.frames.description).dump() +
                    ",\"precision\":";
  AppendDouble(out, s.precision);
  out += ",\"queries\":[\n";
  for (size_t i = 0; i < s.queries.size(); ++i) {
    const LagcompQuery& q = s.queries[i];
    out += "{\"view_tick\":";
    AppendDouble(out, q.view_tick);
    out += ",\"entities\":[";
    for (size_t j = 0; j < q.entities.size(); ++j) {
      const DrawnEntity& e = q.entities[j];
      out += (j == 0 ? "" : ",");
      out += "{\"id\":" + std::to_string(e.id) + ",\"x\":";
      AppendDouble(out, e.x);
      out += ",\"y\":";
      AppendDouble(out, e.y);
      out += ",\"z\":";
      AppendDouble(out, e.z);
      out += "}";
    }
    out += "]}";
    out += i + 1 < s.queries.size() ? ",\n" : "\n";
  }
  out += "]}\n";
  return out;
}

}  // namespace tessera::replication
