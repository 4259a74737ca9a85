// InterestManager against a brute-force reference over many random ticks:
// moving entities and areas (on a lattice, so that distances often equal a
// radius exactly), hysteresis, a filter, removed and reused ids, subscribers
// coming and going, dense and sparse grids.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "interest/interest.h"

namespace tessera::interest {
namespace {

using Ids = std::vector<uint64_t>;

// Checks every (subscriber, entity) pair; state is id -> generation seen.
class Reference {
 public:
  explicit Reference(Config config) : config_(config) {}

  std::vector<View> Update(const std::vector<EntityPos>& entities,
                           const std::vector<Subscriber>& subscribers,
                           const std::function<bool(size_t, uint64_t)>& hide,
                           std::vector<Ids>& candidates) {
    std::vector<EntityPos> es = entities;
    std::sort(es.begin(), es.end(), [](const EntityPos& a, const EntityPos& b) {
      return a.id < b.id;
    });
    std::map<std::string, std::map<uint64_t, uint32_t>> next;
    std::vector<View> views(subscribers.size());
    candidates.assign(subscribers.size(), {});
    for (size_t i = 0; i < subscribers.size(); ++i) {
      const Subscriber& s = subscribers[i];
      std::map<uint64_t, uint32_t> prev;
      if (auto it = state_.find(std::string(s.id)); it != state_.end()) {
        prev = it->second;
      }
      std::map<uint64_t, uint32_t>& seen = next[std::string(s.id)];
      for (const EntityPos& e : es) {
        if (!s.area) break;
        const double dx = static_cast<double>(e.x) - s.area->x;
        const double dy = static_cast<double>(e.y) - s.area->y;
        const double d2 = dx * dx + dy * dy;
        const double r = s.area->radius;
        const double outer = r + static_cast<double>(config_.margin);
        auto p = prev.find(e.id);
        const bool saw_this_entity =
            p != prev.end() && p->second == e.generation;
        if (d2 <= r * r || (d2 <= outer * outer && saw_this_entity)) {
          candidates[i].push_back(e.id);
          if (!hide(i, e.id)) seen[e.id] = e.generation;
        }
      }
      View& v = views[i];
      for (const auto& [id, gen] : seen) {
        v.visible.push_back(id);
        auto p = prev.find(id);
        if (p == prev.end()) {
          v.entered.push_back(id);
        } else if (p->second != gen) {
          v.entered.push_back(id);
          v.left.push_back(id);
        }
      }
      for (const auto& [id, gen] : prev) {
        if (!seen.count(id)) v.left.push_back(id);
      }
      std::sort(v.left.begin(), v.left.end());
    }
    state_ = std::move(next);
    return views;
  }

 private:
  Config config_;
  std::map<std::string, std::map<uint64_t, uint32_t>> state_;
};

struct Scenario {
  float cell_size;
  float margin;
  float world;  // positions in [-world, world] before scaling
  float scale;  // a large scale with small cells makes the grid sparse
  int max_entities;
  float max_radius;  // before scaling
};

void RunScenario(const Scenario& sc, uint64_t seed, int ticks) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  auto chance = [&](int percent) { return uniform(0, 99) < percent; };
  // Lattice of quarter units, so equal distances are exact.
  const int cells = static_cast<int>(sc.world * 4);
  auto coord = [&] { return uniform(-cells, cells) * 0.25f * sc.scale; };

  Result<InterestManager> made =
      InterestManager::Create({sc.cell_size, sc.margin});
  ASSERT_TRUE(made.ok());
  InterestManager manager = std::move(made).value();
  Reference reference({sc.cell_size, sc.margin});

  std::vector<uint64_t> id_pool;
  for (int i = 0; i < sc.max_entities * 2; ++i) {
    id_pool.push_back(chance(20) ? rng() >> 11 : static_cast<uint64_t>(i));
  }
  std::sort(id_pool.begin(), id_pool.end());
  id_pool.erase(std::unique(id_pool.begin(), id_pool.end()), id_pool.end());
  std::vector<EntityPos> entities;
  std::vector<std::string> names;
  std::vector<std::optional<Area>> areas;
  for (int i = 0; i < 25; ++i) names.push_back("sub-" + std::to_string(i));
  areas.resize(names.size());

  std::vector<View> views;
  for (int tick = 0; tick < ticks; ++tick) {
    // Entities: moves, removals, reused ids, new ones, input order.
    // Half the ticks keep the same entities (only positions change).
    const bool churn = chance(50);
    std::vector<EntityPos> next;
    for (EntityPos e : entities) {
      if (churn && chance(4)) continue;
      if (churn && chance(4)) ++e.generation;
      if (chance(5)) {
        e.x = coord();
        e.y = coord();
      } else {
        e.x += uniform(-8, 8) * 0.25f * sc.scale;
        e.y += uniform(-8, 8) * 0.25f * sc.scale;
      }
      next.push_back(e);
    }
    std::set<uint64_t> used;
    for (const EntityPos& e : next) used.insert(e.id);
    const int target = churn ? uniform(0, sc.max_entities) : 0;
    for (int tries = 0;
         tries < 3 * sc.max_entities && static_cast<int>(next.size()) < target;
         ++tries) {
      const uint64_t id = id_pool[rng() % id_pool.size()];
      if (used.insert(id).second) {
        next.push_back(
            {id, static_cast<uint32_t>(rng() % 3), coord(), coord()});
      }
    }
    if (chance(30)) std::shuffle(next.begin(), next.end(), rng);
    entities = std::move(next);

    // Subscribers: present or not, in some order, areas that drift.
    std::vector<size_t> order;
    for (size_t i = 0; i < names.size(); ++i) {
      if (chance(92)) order.push_back(i);
    }
    if (chance(30)) std::shuffle(order.begin(), order.end(), rng);
    std::vector<Subscriber> subs;
    for (size_t i : order) {
      std::optional<Area>& a = areas[i];
      if (!a || chance(5)) {
        a = Area{
            coord(), coord(),
            uniform(0, static_cast<int>(sc.max_radius * 4)) * 0.25f * sc.scale};
        if (!entities.empty() && chance(40)) {
          const EntityPos& e = entities[rng() % entities.size()];
          a->x = e.x;
          a->y = e.y;
        }
      } else {
        a->x += uniform(-2, 2) * 0.25f * sc.scale;
        a->radius = std::max(0.0f, a->radius + uniform(-1, 1) * sc.scale);
      }
      if (chance(8)) a.reset();
      subs.push_back({names[i], a});
    }

    const bool filtered = chance(70);
    auto hide = [&](size_t i, uint64_t id) {
      if (!filtered) return false;
      return (id * 2654435761u + std::hash<std::string_view>()(subs[i].id) +
              static_cast<uint64_t>(tick) * 40503u) %
                 7 ==
             0;
    };
    std::vector<Ids> want_candidates;
    std::vector<View> want =
        reference.Update(entities, subs, hide, want_candidates);
    int filter_calls = 0;
    Filter filter = [&](std::span<const Subscriber> s, FilterBatch& batch) {
      ++filter_calls;
      EXPECT_EQ(s.size(), subs.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        std::span<const uint64_t> c = batch.candidates(i);
        EXPECT_EQ(Ids(c.begin(), c.end()), want_candidates[i])
            << "tick " << tick << " " << subs[i].id;
        for (size_t j = 0; j < c.size(); ++j) {
          if (hide(i, c[j])) batch.Hide(i, j);
        }
      }
      return Status::Ok();
    };
    Status st =
        manager.Update(entities, subs, filtered ? &filter : nullptr, views);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(filter_calls, filtered ? 1 : 0);
    ASSERT_EQ(views.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(views[i].visible, want[i].visible)
          << "seed " << seed << " tick " << tick << " " << subs[i].id;
      ASSERT_EQ(views[i].entered, want[i].entered)
          << "seed " << seed << " tick " << tick << " " << subs[i].id;
      ASSERT_EQ(views[i].left, want[i].left)
          << "seed " << seed << " tick " << tick << " " << subs[i].id;
    }
  }
}

TEST(InterestRandom, MatchesBruteForce) {
  const Scenario scenarios[] = {
      // cell, margin, world, scale, entities, max radius
      {10, 0, 40, 1, 120, 20},       {7.5f, 2.5f, 40, 1, 150, 25},
      {1, 1, 20, 1, 200, 6},         {25, 5, 60, 1, 300, 40},
      {3, 0.5f, 100, 1, 400, 8},     {100, 3, 30, 1, 80, 30},
      {0.5f, 2, 200, 1000, 150, 10},  // sparse grid
      {2, 1, 400, 1, 3000, 3},        // few hits among many: sorted hits
      {10, 2, 20, 1, 500, 15},        // crowded cells: searched by y
      {6, 0, 15, 1, 700, 12},
  };
  uint64_t seed = 1;
  for (const Scenario& sc : scenarios) {
    for (int rep = 0; rep < 3; ++rep) {
      SCOPED_TRACE("scenario cell " + std::to_string(sc.cell_size) + " seed " +
                   std::to_string(seed));
      RunScenario(sc, seed++, sc.max_entities > 1000 ? 15 : 60);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace tessera::interest
