// The guest's tessera_replicated() output (docs/guest-abi.md, "Interest and
// replication"): a parser for untrusted bytes and a writer (for tests,
// benches and reference guests).
#ifndef TESSERA_REPLICATION_CHANGE_LIST_H_
#define TESSERA_REPLICATION_CHANGE_LIST_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::replication {

inline constexpr uint64_t kMaxEntityId = (uint64_t{1} << 53) - 1;

struct ComponentChange {
  uint8_t id = 0;
  bool removed = false;
  std::string_view bytes;  // into the parsed input; empty when removed
};

struct EntityChange {
  uint64_t id = 0;
  bool is_new = false;
  bool has_position = false;
  double position[3] = {0, 0, 0};
  // components[first_component, first_component + component_count) of the
  // ChangeList.
  uint32_t first_component = 0;
  uint32_t component_count = 0;
};

// A parsed change list. Views point into the parsed bytes. Reusable: Parse
// keeps the vectors' capacity.
struct ChangeList {
  bool full = false;
  std::vector<uint64_t> removed;
  std::vector<EntityChange> changed;
  std::vector<ComponentChange> components;
};

// Parses and checks the layout and every value: truncation, trailing bytes,
// unknown flag bits, ids >= 2^53, non-finite coordinates, |coordinate /
// precision| >= 2^52, a component listed twice for one entity. Does not
// check ids against a store (Mirror::Apply does). Messages start with what
// is wrong, e.g. "truncated change list: ...".
Status ParseChangeList(std::string_view bytes, double precision,
                       ChangeList* out);

// Builds a change list. Entries are written in the order they are begun.
class ChangeListWriter {
 public:
  explicit ChangeListWriter(bool full = false) : full_(full) {}

  void Remove(uint64_t id) { removed_.push_back(id); }
  // Begins an entity's entry; the calls below apply to the last one begun.
  void Change(uint64_t id, bool is_new);
  void Position(double x, double y, double z);
  void SetComponent(uint8_t id, std::string_view bytes);
  void RemoveComponent(uint8_t id);

  bool empty() const { return removed_.empty() && entries_.empty(); }
  std::string Finish() const;

 private:
  struct Entry {
    uint64_t id;
    bool is_new;
    std::optional<std::array<double, 3>> position;
    std::vector<std::pair<uint8_t, std::optional<std::string>>> components;
  };
  bool full_;
  std::vector<uint64_t> removed_;
  std::vector<Entry> entries_;
};

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_CHANGE_LIST_H_
