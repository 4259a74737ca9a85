#include "interest/interest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace tessera::interest {
namespace {

using Ids = std::vector<uint64_t>;

InterestManager Make(float cell_size, float margin) {
  Result<InterestManager> m = InterestManager::Create({cell_size, margin});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

std::vector<View> Tick(InterestManager& m, const std::vector<EntityPos>& es,
                       const std::vector<Subscriber>& subs,
                       const Filter* filter = nullptr) {
  std::vector<View> views;
  Status st = m.Update(es, subs, filter, views);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return views;
}

// One subscriber "p" at the origin with `radius`, one entity (id 1) at x.
View Single(InterestManager& m, float x, float radius = 100) {
  std::vector<View> v = Tick(m, {{1, 0, x, 0}}, {{"p", Area{0, 0, radius}}});
  return v.at(0);
}

TEST(InterestConfig, Validation) {
  EXPECT_TRUE(ValidateConfig({}).ok());
  EXPECT_TRUE(ValidateConfig({0.5f, 0}).ok());
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (Config bad :
       {Config{0, 0}, Config{-1, 0}, Config{inf, 0}, Config{nan, 0},
        Config{10, -1}, Config{10, inf}, Config{10, nan}}) {
    Result<InterestManager> m = InterestManager::Create(bad);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(Interest, EntersAtRadiusButNotInTheMarginWhenNew) {
  InterestManager m = Make(50, 10);
  View at_radius = Single(m, 100);
  EXPECT_EQ(at_radius.visible, Ids{1});
  EXPECT_EQ(at_radius.entered, Ids{1});

  InterestManager fresh = Make(50, 10);
  View in_margin = Single(fresh, 105);  // radius + margin / 2
  EXPECT_EQ(in_margin.visible, Ids{});
  EXPECT_EQ(in_margin.entered, Ids{});
  EXPECT_EQ(Single(fresh, 100.5f).visible, Ids{});
  EXPECT_EQ(Single(fresh, 100).entered, Ids{1});
}

TEST(Interest, StaysUntilBeyondRadiusPlusMargin) {
  InterestManager m = Make(50, 10);
  EXPECT_EQ(Single(m, 90).entered, Ids{1});
  for (float x : {105.0f, 110.0f, -110.0f, 109.9f}) {
    View v = Single(m, x);
    EXPECT_EQ(v.visible, Ids{1}) << x;
    EXPECT_TRUE(v.entered.empty() && v.left.empty()) << x;
  }
  View out = Single(m, 110.5f);
  EXPECT_EQ(out.visible, Ids{});
  EXPECT_EQ(out.left, Ids{1});
  // Back in the margin is not enough to enter again.
  EXPECT_EQ(Single(m, 105).visible, Ids{});
  EXPECT_EQ(Single(m, 100).entered, Ids{1});
}

TEST(Interest, NoFlickerWhenJitteringAcrossTheRadius) {
  InterestManager m = Make(30, 5);
  int entered = 0, left = 0;
  for (int t = 0; t < 40; ++t) {
    const float x = 100 + ((t % 3) - 1) * 3.5f;  // 96.5, 100, 103.5
    View v = Single(m, x);
    entered += static_cast<int>(v.entered.size());
    left += static_cast<int>(v.left.size());
    EXPECT_EQ(v.visible, Ids{1}) << t;
  }
  EXPECT_EQ(entered, 1);
  EXPECT_EQ(left, 0);
}

TEST(Interest, FilterIsCalledOnceWithAllSubscribersAndHides) {
  InterestManager m = Make(10, 0);
  std::vector<EntityPos> es = {{1, 0, 0, 0}, {2, 0, 5, 0}, {3, 0, 50, 0}};
  std::vector<Subscriber> subs = {
      {"a", Area{0, 0, 10}}, {"b", std::nullopt}, {"c", Area{50, 0, 48}}};
  int calls = 0;
  bool hide_two = true;
  Filter filter = [&](std::span<const Subscriber> s, FilterBatch& batch) {
    ++calls;
    EXPECT_EQ(s.size(), 3u);
    EXPECT_EQ(batch.size(), 3u);
    EXPECT_EQ(s[0].id, "a");
    EXPECT_EQ(std::vector<uint64_t>(batch.candidates(0).begin(),
                                    batch.candidates(0).end()),
              (Ids{1, 2}));
    EXPECT_TRUE(batch.candidates(1).empty());
    EXPECT_EQ(std::vector<uint64_t>(batch.candidates(2).begin(),
                                    batch.candidates(2).end()),
              (Ids{2, 3}));
    EXPECT_EQ(batch.keep_bits(0).size(), 1u);
    EXPECT_EQ(batch.keep_bits(0)[0], 0b11);
    EXPECT_TRUE(batch.keep_bits(1).empty());
    EXPECT_EQ(batch.all_keep_bits().size(), 2u);
    if (hide_two) {
      batch.Hide(0, 1);
      batch.Hide(2, 0);
      EXPECT_FALSE(batch.kept(0, 1));
      EXPECT_TRUE(batch.kept(0, 0));
    }
    return Status::Ok();
  };
  std::vector<View> v = Tick(m, es, subs, &filter);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(v[0].visible, Ids{1});
  EXPECT_EQ(v[1].visible, Ids{});
  EXPECT_EQ(v[2].visible, Ids{3});

  hide_two = false;
  v = Tick(m, es, subs, &filter);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(v[0].visible, (Ids{1, 2}));
  EXPECT_EQ(v[0].entered, Ids{2});
  EXPECT_EQ(v[2].entered, Ids{2});

  hide_two = true;  // hidden while visible: it leaves
  v = Tick(m, es, subs, &filter);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(v[0].left, Ids{2});
  EXPECT_EQ(v[2].left, Ids{2});
}

TEST(Interest, HiddenInTheMarginDoesNotComeBackUntilWithinRadius) {
  InterestManager m = Make(25, 10);
  bool hide = false;
  Filter filter = [&](std::span<const Subscriber>, FilterBatch& batch) {
    if (hide && !batch.candidates(0).empty()) batch.Hide(0, 0);
    return Status::Ok();
  };
  std::vector<Subscriber> subs = {{"p", Area{0, 0, 100}}};
  auto at = [&](float x) { return Tick(m, {{1, 0, x, 0}}, subs, &filter)[0]; };
  EXPECT_EQ(at(95).entered, Ids{1});
  EXPECT_EQ(at(105).visible, Ids{1});
  hide = true;
  EXPECT_EQ(at(105).left, Ids{1});
  hide = false;
  EXPECT_EQ(at(105).visible, Ids{});
  EXPECT_EQ(at(99).entered, Ids{1});
}

TEST(Interest, FailingFilterLeavesTheStateAsBefore) {
  InterestManager m = Make(10, 0);
  std::vector<Subscriber> subs = {{"p", Area{0, 0, 10}}};
  EXPECT_EQ(Tick(m, {{1, 0, 1, 0}}, subs)[0].entered, Ids{1});
  Filter failing = [](std::span<const Subscriber>, FilterBatch&) {
    return Status(StatusCode::kTrap, "guest trapped");
  };
  std::vector<View> views;
  Status st =
      m.Update(std::vector<EntityPos>{{2, 0, 1, 0}}, subs, &failing, views);
  EXPECT_EQ(st.code(), StatusCode::kTrap);
  std::vector<View> v = Tick(m, {{1, 0, 1, 0}, {3, 0, 2, 0}}, subs);
  EXPECT_EQ(v[0].visible, (Ids{1, 3}));
  EXPECT_EQ(v[0].entered, Ids{3});
  EXPECT_TRUE(v[0].left.empty());
}

TEST(Interest, EnteredAndLeftAcrossTicks) {
  InterestManager m = Make(20, 0);
  std::vector<Subscriber> subs = {{"p", Area{0, 0, 50}}};
  std::vector<EntityPos> es = {{5, 0, 10, 10}, {7, 0, 60, 0}, {9, 0, -30, 0}};
  std::vector<View> v = Tick(m, es, subs);
  EXPECT_EQ(v[0].visible, (Ids{5, 9}));
  EXPECT_EQ(v[0].entered, (Ids{5, 9}));
  es[1].x = 40;   // 7 enters
  es[2].x = -51;  // 9 leaves
  v = Tick(m, es, subs);
  EXPECT_EQ(v[0].visible, (Ids{5, 7}));
  EXPECT_EQ(v[0].entered, Ids{7});
  EXPECT_EQ(v[0].left, Ids{9});
  v = Tick(m, es, subs);  // nothing moves: no change
  EXPECT_EQ(v[0].visible, (Ids{5, 7}));
  EXPECT_TRUE(v[0].entered.empty() && v[0].left.empty());
  subs[0].area = Area{60, 0, 25};  // the subscriber moves
  v = Tick(m, es, subs);
  EXPECT_EQ(v[0].visible, Ids{7});
  EXPECT_EQ(v[0].left, Ids{5});
}

TEST(Interest, ReusedIdIsInBothLeftAndEntered) {
  InterestManager m = Make(10, 5);
  std::vector<Subscriber> subs = {{"near", Area{0, 0, 20}},
                                  {"far", Area{100, 0, 20}},
                                  {"moving", Area{0, 0, 20}}};
  std::vector<EntityPos> es = {{1, 0, 10, 0}, {2, 0, 18, 0}};
  Tick(m, es, subs);
  es[0].generation = 1;   // removed and reused within one tick
  es[1] = {2, 4, 22, 0};  // reused, and only in the margin
  subs[2].area = Area{-50, 0, 20};
  std::vector<View> v = Tick(m, es, subs);
  EXPECT_EQ(v[0].visible, Ids{1});
  EXPECT_EQ(v[0].entered, Ids{1});
  EXPECT_EQ(v[0].left, (Ids{1, 2}));  // the new 2 must come within radius
  EXPECT_TRUE(v[1].visible.empty() && v[1].left.empty());
  EXPECT_EQ(v[2].left, (Ids{1, 2}));
  EXPECT_TRUE(v[2].entered.empty());
  // Unchanged generation next tick: a plain stay.
  v = Tick(m, es, subs);
  EXPECT_EQ(v[0].visible, Ids{1});
  EXPECT_TRUE(v[0].entered.empty() && v[0].left.empty());
}

TEST(Interest, VanishedEntityLeavesAndComesBackAsEntered) {
  InterestManager m = Make(10, 0);
  std::vector<Subscriber> subs = {{"p", Area{0, 0, 20}}};
  Tick(m, {{1, 0, 1, 1}, {2, 0, 2, 2}}, subs);
  std::vector<View> v = Tick(m, {{2, 0, 2, 2}}, subs);
  EXPECT_EQ(v[0].left, Ids{1});
  EXPECT_EQ(v[0].visible, Ids{2});
  v = Tick(m, {}, subs);
  EXPECT_EQ(v[0].left, Ids{2});
  v = Tick(m, {{1, 0, 1, 1}}, subs);
  EXPECT_EQ(v[0].entered, Ids{1});
}

TEST(Interest, NoAreaSeesNothing) {
  InterestManager m = Make(10, 0);
  std::vector<EntityPos> es = {{1, 0, 0, 0}, {2, 0, 3, 3}};
  std::vector<Subscriber> subs = {{"p", std::nullopt}};
  std::vector<View> v = Tick(m, es, subs);
  EXPECT_TRUE(v[0].visible.empty() && v[0].entered.empty());
  subs[0].area = Area{0, 0, 10};
  EXPECT_EQ(Tick(m, es, subs)[0].entered, (Ids{1, 2}));
  subs[0].area.reset();
  v = Tick(m, es, subs);
  EXPECT_TRUE(v[0].visible.empty());
  EXPECT_EQ(v[0].left, (Ids{1, 2}));
}

TEST(Interest, ForgottenSubscriberStartsFromAnEmptyView) {
  InterestManager m = Make(10, 0);
  std::vector<EntityPos> es = {{1, 0, 0, 0}};
  std::vector<Subscriber> both = {{"a", Area{0, 0, 5}}, {"b", Area{0, 0, 5}}};
  Tick(m, es, both);
  EXPECT_EQ(m.subscriber_count(), 2u);
  std::vector<View> v = Tick(m, es, {both[1]});  // "a" is forgotten
  EXPECT_EQ(m.subscriber_count(), 1u);
  EXPECT_TRUE(v[0].entered.empty());
  // Listed again, in another order: "a" starts over, "b" keeps its state.
  v = Tick(m, es, {both[1], both[0]});
  EXPECT_TRUE(v[0].entered.empty());
  EXPECT_EQ(v[1].entered, Ids{1});
  m.Reset();
  EXPECT_EQ(m.subscriber_count(), 0u);
  EXPECT_EQ(Tick(m, es, both)[1].entered, Ids{1});
}

TEST(Interest, UnsortedInputGivesAscendingIds) {
  InterestManager m = Make(10, 0);
  std::vector<EntityPos> es = {{900, 0, 1, 0},
                               {3, 0, 2, 0},
                               {uint64_t{1} << 52, 0, 3, 0},
                               {70000, 0, 4, 0}};
  std::vector<View> v = Tick(m, es, {{"p", Area{0, 0, 10}}});
  EXPECT_EQ(v[0].visible, (Ids{3, 900, 70000, uint64_t{1} << 52}));
}

TEST(Interest, RefusesBadInputWithoutChangingState) {
  InterestManager m = Make(10, 0);
  std::vector<Subscriber> subs = {{"p", Area{0, 0, 10}}};
  Tick(m, {{1, 0, 0, 0}}, subs);
  std::vector<View> views;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::vector<EntityPos>> bad_entities = {
      {{1, 0, 0, 0}, {1, 0, 1, 1}}, {{1, 0, nan, 0}}};
  for (const auto& es : bad_entities) {
    EXPECT_EQ(m.Update(es, subs, nullptr, views).code(),
              StatusCode::kInvalidArgument);
  }
  std::vector<std::vector<Subscriber>> bad_subs = {
      {{"p", Area{0, 0, 10}}, {"p", Area{0, 0, 10}}},
      {{"p", Area{0, 0, -1}}},
      {{"p", Area{nan, 0, 1}}}};
  for (const auto& s : bad_subs) {
    EXPECT_EQ(m.Update(std::vector<EntityPos>{{1, 0, 0, 0}}, s, nullptr, views)
                  .code(),
              StatusCode::kInvalidArgument);
  }
  std::vector<View> v = Tick(m, {{1, 0, 0, 0}}, subs);
  EXPECT_EQ(v[0].visible, Ids{1});
  EXPECT_TRUE(v[0].entered.empty());
}

// The ids within radius of `a` (a fresh subscriber, no filter).
Ids WithinRadius(const std::vector<EntityPos>& es, const Area& a) {
  Ids ids;
  for (const EntityPos& e : es) {
    const double dx = static_cast<double>(e.x) - a.x;
    const double dy = static_cast<double>(e.y) - a.y;
    const double r = a.radius;
    if (dx * dx + dy * dy <= r * r) ids.push_back(e.id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Entities on every point of a lattice that falls on cell borders (and
// across zero); every subscriber must see exactly the points within radius.
TEST(Interest, CellBordersAndNegativeCoordinates) {
  InterestManager m = Make(10, 0);
  std::vector<EntityPos> es;
  for (int y = -40; y <= 40; y += 5) {
    for (int x = -40; x <= 40; x += 5) {
      es.push_back(
          {es.size(), 0, static_cast<float>(x), static_cast<float>(y)});
    }
  }
  std::vector<Subscriber> subs;
  std::vector<std::string> names;
  for (int cy = -30; cy <= 30; cy += 10) {
    for (float r : {0.0f, 5.0f, 10.0f, 15.0f, 20.0f}) {
      names.push_back(std::to_string(cy) + "/" + std::to_string(r));
    }
  }
  size_t k = 0;
  for (int cy = -30; cy <= 30; cy += 10) {
    for (float r : {0.0f, 5.0f, 10.0f, 15.0f, 20.0f}) {
      subs.push_back({names[k++], Area{-10.0f, static_cast<float>(cy), r}});
    }
  }
  std::vector<View> v = Tick(m, es, subs);
  for (size_t i = 0; i < subs.size(); ++i) {
    const Ids want = WithinRadius(es, *subs[i].area);
    EXPECT_EQ(v[i].visible, want) << subs[i].id;
    EXPECT_FALSE(want.empty());
  }
}

// Coordinates far beyond the grid's cell range (cells are clamped) and up
// to the largest floats.
TEST(Interest, ExtremeCoordinates) {
  const float big = std::numeric_limits<float>::max();
  const std::vector<float> coords = {-big, -1e30f, -5e8f, -1, 0,
                                     1,    5e8f,   1e30f, big};
  std::vector<EntityPos> es;
  for (float x : coords) {
    for (float y : coords) es.push_back({es.size(), 0, x, y});
  }
  std::vector<Subscriber> subs;
  std::vector<std::string> names;
  std::vector<Area> areas;
  for (float c : coords) {
    for (float r : {0.0f, 2.0f, 1e9f, 1e30f, big}) areas.push_back({c, c, r});
  }
  for (size_t i = 0; i < areas.size(); ++i) names.push_back(std::to_string(i));
  for (size_t i = 0; i < areas.size(); ++i)
    subs.push_back({names[i], areas[i]});
  for (float cell : {1e-3f, 1.0f, 1e6f, 1e37f}) {
    InterestManager m = Make(cell, 0);
    std::vector<View> v = Tick(m, es, subs);
    for (size_t i = 0; i < subs.size(); ++i) {
      EXPECT_EQ(v[i].visible, WithinRadius(es, areas[i]))
          << "cell " << cell << " area " << areas[i].x << " r "
          << areas[i].radius;
    }
  }
}

TEST(Interest, LargeRadiusSpansManyCells) {
  InterestManager m = Make(1, 0);
  std::vector<EntityPos> es;
  for (uint64_t i = 0; i < 500; ++i) {
    es.push_back({i, 0, static_cast<float>(i % 50) * 7 - 150,
                  static_cast<float>(i / 50) * 31 - 150});
  }
  std::vector<View> v = Tick(m, es, {{"p", Area{0, 0, 1000}}});
  EXPECT_EQ(v[0].visible.size(), 500u);
}

TEST(Interest, SparseWorldFarApart) {
  // Cells of 1 with entities a million apart: the grid's sparse mode.
  InterestManager m = Make(1, 0);
  std::vector<EntityPos> es;
  for (uint64_t i = 0; i < 100; ++i) {
    es.push_back({i, 0, static_cast<float>(i % 10) * 1e6f,
                  static_cast<float>(i / 10) * -1e6f});
  }
  es.push_back({1000, 0, 3e6f + 0.5f, -2e6f + 0.5f});
  std::vector<View> v =
      Tick(m, es, {{"a", Area{3e6f, -2e6f, 1}}, {"b", Area{0, 0, 2e6f}}});
  EXPECT_EQ(v[0].visible, (Ids{23, 1000}));
  EXPECT_EQ(v[1].visible, (Ids{0, 1, 2, 10, 11, 20}));
}

}  // namespace
}  // namespace tessera::interest
