#include "interest/group.h"

#include <gtest/gtest.h>

#include <vector>

namespace tessera::interest {
namespace {

using Groups = std::vector<std::vector<size_t>>;

View Visible(std::vector<uint64_t> ids) { return View{std::move(ids), {}, {}}; }

TEST(GroupByVisible, Empty) { EXPECT_EQ(GroupByVisible({}), Groups{}); }

TEST(GroupByVisible, GroupsEqualSetsOnlyInInputOrder) {
  std::vector<View> views = {Visible({1, 2, 3}),    Visible({}),
                             Visible({1, 2}),       Visible({1, 2, 3}),
                             Visible({}),           Visible({2, 1}),
                             Visible({1, 2, 3, 4}), Visible({1, 2})};
  // Entered/left do not matter.
  views[3].entered = {3};
  EXPECT_EQ(GroupByVisible(views), (Groups{{0, 3}, {1, 4}, {2, 7}, {5}, {6}}));
}

TEST(GroupByVisible, AllDistinctAndAllEqual) {
  std::vector<View> distinct, equal;
  for (uint64_t i = 0; i < 50; ++i) {
    distinct.push_back(Visible({i, i + 1}));
    equal.push_back(Visible({7, 8, 9}));
  }
  Groups g = GroupByVisible(distinct);
  ASSERT_EQ(g.size(), 50u);
  for (size_t i = 0; i < 50; ++i) EXPECT_EQ(g[i], std::vector<size_t>{i});
  g = GroupByVisible(equal);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].size(), 50u);
  EXPECT_EQ(g[0].front(), 0u);
  EXPECT_EQ(g[0].back(), 49u);
}

}  // namespace
}  // namespace tessera::interest
