// The optional interest and replication exports (docs/guest-abi.md,
// "Interest and replication"), defined by TESSERA_SHARD for the hooks a
// shard class has (tessera/interest.h, tessera/replicated.h):
//
//   tessera_interest_config, tessera_entities,  with interest()
//   tessera_interest_areas
//   tessera_filter                              with can_see()
//   tessera_snapshot_visible                    with snapshot_visible()
//   tessera_replication_config,                 with replicated()
//   tessera_replicated
//
// Values the host would refuse (a non-finite coordinate, an id >= 2^53, a
// cell size <= 0, ...) make the guest panic with a message naming the hook,
// so the shard fails with that text rather than the host's "abi: ..." line.
// A malformed argument from the host is answered with kError.
#ifndef TESSERA_INTEREST_EXPORT_H_
#define TESSERA_INTEREST_EXPORT_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/abi.h"
#include "tessera/codec.h"
#include "tessera/detail/binary_io.h"
#include "tessera/detail/runtime.h"
#include "tessera/interest.h"
#include "tessera/log.h"
#include "tessera/replicated.h"

namespace tessera::detail {

template <class S>
ReplicationConfig replication_config_of(S& s) {
  if constexpr (HasReplicationConfig<S>) {
    return s.replication_config();
  } else {
    return ReplicationConfig{};
  }
}

inline std::string quoted(std::string_view sid) {
  return "(\"" + std::string(sid) + "\")";
}

// Reads `count` u64 ids into `out` (cleared first).
inline void read_ids(BinaryReader& r, const char* what,
                     std::vector<std::uint64_t>& out) {
  out.clear();
  const std::uint32_t n = r.u32(what);
  if (!r.can_hold(n, 8)) return r.fail("count larger than the argument", what);
  out.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) out.push_back(r.u64(what));
}

inline std::int32_t malformed(const char* call, const BinaryReader& r) {
  return fail_with(std::string(call) + ": malformed argument: " + r.error());
}

// tessera_interest_config, tessera_entities, tessera_interest_areas.
template <class S>
struct InterestExports {};
template <HasInterest S>
struct InterestExports<S> {
  // kOk with `f64 cell_size, f64 margin, u8 flags`, or kNoState (off).
  TESSERA_DETAIL_EXPORT("tessera_interest_config")
  static std::int32_t interest_config() {
    S& s = started_shard<S>("tessera_interest_config");
    Runtime& rt = runtime();
    rt.output.clear();
    const std::optional<InterestConfig> config = s.interest();
    if (!config) return abi::kNoState;
    if (!(std::isfinite(config->cell_size) && config->cell_size > 0 &&
          std::isfinite(config->margin) && config->margin >= 0)) {
      panic(
          "interest(): cell_size must be a finite number > 0 and margin "
          "a finite number >= 0 (got " +
          std::to_string(config->cell_size) + " and " +
          std::to_string(config->margin) + ")");
    }
    BinaryWriter w(rt.output);
    w.f64(config->cell_size);
    w.f64(config->margin);
    w.u8(config->shared_snapshots ? abi::kInterestFlagSharedSnapshots : 0);
    return abi::kOk;
  }

  // kOk with `u32 count`, then `u64 id, u32 generation, f32 x, f32 y` each.
  TESSERA_DETAIL_EXPORT("tessera_entities") static std::int32_t entities() {
    S& s = started_shard<S>("tessera_entities");
    Runtime& rt = runtime();
    rt.output.clear();
    static std::vector<EntityPos>* list = new std::vector<EntityPos>();
    list->clear();
    if constexpr (HasEntities<S>) {
      s.entities(*list);
      check_unique(*list);
    } else if (Replicated* store = s.replicated()) {
      ReplicatedAccess::entity_positions(*store, replication_config_of(s).y_up,
                                         *list);
    }
    BinaryWriter w(rt.output);
    w.u32(static_cast<std::uint32_t>(list->size()));
    for (const EntityPos& e : *list) {
      if (e.id >= abi::kEntityIdLimit) {
        panic("entities(): entity id " + std::to_string(e.id) +
              " is too large (ids must be below 2^53)");
      }
      if (!std::isfinite(e.x) || !std::isfinite(e.y)) {
        panic("entities(): entity " + std::to_string(e.id) +
              " has a position that is not a finite float");
      }
      w.u64(e.id);
      w.u32(e.generation);
      w.f32(e.x);
      w.f32(e.y);
    }
    return abi::kOk;
  }

  // Argument: `u32 count`, then count `str` subscriber ids. kOk with, per
  // subscriber, `u8 has_area, f32 x, f32 y, f32 radius` (zeros without an
  // area).
  TESSERA_DETAIL_EXPORT("tessera_interest_areas")
  static std::int32_t interest_areas(GuestPtr ptr, GuestLen len) {
    const ArgBuffer arg(ptr, len);
    S& s = started_shard<S>("tessera_interest_areas");
    Runtime& rt = runtime();
    rt.output.clear();
    BinaryReader r(arg.view());
    const std::uint32_t count = r.u32("subscriber count");
    if (!r.can_hold(count, 4)) {
      r.fail("count larger than the argument", "subscriber count");
    }
    BinaryWriter w(rt.output);
    for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
      const std::string_view sid = r.str("subscriber id");
      if (!r.ok()) break;
      const std::optional<InterestArea> area = s.interest_area(sid);
      if (!area) {
        w.u8(0);
        w.f32(0);
        w.f32(0);
        w.f32(0);
        continue;
      }
      if (!(std::isfinite(area->x) && std::isfinite(area->y) &&
            std::isfinite(area->radius) && area->radius >= 0)) {
        panic("interest_area" + quoted(sid) +
              ": x, y and radius must be finite and radius >= 0");
      }
      w.u8(1);
      w.f32(area->x);
      w.f32(area->y);
      w.f32(area->radius);
    }
    if (!r.finish()) return malformed("tessera_interest_areas", r);
    return abi::kOk;
  }

 private:
  static void check_unique(const std::vector<EntityPos>& list) {
    static std::vector<std::uint64_t>* ids = new std::vector<std::uint64_t>();
    ids->clear();
    for (const EntityPos& e : list) ids->push_back(e.id);
    std::sort(ids->begin(), ids->end());
    auto twice = std::adjacent_find(ids->begin(), ids->end());
    if (twice != ids->end()) {
      panic("entities(): entity id " + std::to_string(*twice) +
            " is listed twice");
    }
  }
};

// tessera_filter, for shards with can_see().
template <class S>
struct FilterExport {};
template <HasCanSee S>
struct FilterExport<S> {
  // Argument: `u32 count`, then per subscriber `str sid, u32 n, n x u64 id`.
  // kOk with, per subscriber, ceil(n / 8) bytes: bit i % 8 of byte i / 8 set
  // when can_see(sid, id i) (unused high bits 0).
  TESSERA_DETAIL_EXPORT("tessera_filter")
  static std::int32_t filter(GuestPtr ptr, GuestLen len) {
    const ArgBuffer arg(ptr, len);
    S& s = started_shard<S>("tessera_filter");
    Runtime& rt = runtime();
    rt.output.clear();
    BinaryReader r(arg.view());
    const std::uint32_t count = r.u32("subscriber count");
    if (!r.can_hold(count, 8)) {
      r.fail("count larger than the argument", "subscriber count");
    }
    for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
      const std::string_view sid = r.str("subscriber id");
      const std::uint32_t n = r.u32("id count");
      if (!r.can_hold(n, 8)) r.fail("count larger than the argument", "ids");
      if (!r.ok()) break;
      const std::size_t at = rt.output.size();
      rt.output.append((n + 7) / 8, '\0');
      for (std::uint32_t j = 0; j < n; ++j) {
        if (s.can_see(sid, r.u64("id"))) {
          rt.output[at + j / 8] =
              static_cast<char>(rt.output[at + j / 8] | (1 << (j % 8)));
        }
      }
    }
    if (!r.finish()) return malformed("tessera_filter", r);
    return abi::kOk;
  }
};

// tessera_snapshot_visible, for shards with snapshot_visible().
template <class S>
struct SnapshotVisibleExport {};
template <HasSnapshotVisible S>
struct SnapshotVisibleExport<S> {
  // Argument: `str sid`, then three `u32 n, n x u64` lists: visible, entered,
  // left. kOk with snapshot_visible(sid, view) in the shard's codec.
  TESSERA_DETAIL_EXPORT("tessera_snapshot_visible")
  static std::int32_t snapshot_visible(GuestPtr ptr, GuestLen len) {
    const ArgBuffer arg(ptr, len);
    S& s = started_shard<S>("tessera_snapshot_visible");
    Runtime& rt = runtime();
    rt.output.clear();
    static std::vector<std::uint64_t>* lists =
        new std::vector<std::uint64_t>[3];
    BinaryReader r(arg.view());
    const std::string_view sid = r.str("subscriber id");
    read_ids(r, "visible ids", lists[0]);
    read_ids(r, "entered ids", lists[1]);
    read_ids(r, "left ids", lists[2]);
    if (!r.finish()) return malformed("tessera_snapshot_visible", r);
    const View view{lists[0], lists[1], lists[2]};
    encode(rt.codec, s.snapshot_visible(sid, view), rt.output);
    return abi::kOk;
  }
};

// tessera_replication_config and tessera_replicated, for shards with
// replicated().
template <class S>
struct ReplicationExports {};
template <HasReplicated S>
struct ReplicationExports<S> {
  // kOk with `f64 precision, u32 max_bytes_per_tick, u8 flags`, or kNoState
  // when replicated() is nullptr (replication off).
  TESSERA_DETAIL_EXPORT("tessera_replication_config")
  static std::int32_t replication_config() {
    S& s = started_shard<S>("tessera_replication_config");
    Runtime& rt = runtime();
    rt.output.clear();
    if (s.replicated() == nullptr) return abi::kNoState;
    const ReplicationConfig config = checked_config(s);
    BinaryWriter w(rt.output);
    w.f64(config.precision);
    w.u32(config.max_bytes_per_tick);
    w.u8(config.y_up ? abi::kReplicationFlagYUp : 0);
    return abi::kOk;
  }

  // kOk with the store's changes since the previous call (FULL the first
  // time); see ReplicatedAccess::take_changes.
  TESSERA_DETAIL_EXPORT("tessera_replicated")
  static std::int32_t replicated() {
    S& s = started_shard<S>("tessera_replicated");
    Runtime& rt = runtime();
    rt.output.clear();
    Replicated* store = s.replicated();
    if (store == nullptr) {
      panic(
          "tessera_replicated: replicated() returned nullptr, but it "
          "returned a store when the host read the replication config");
    }
    ReplicatedAccess::take_changes(*store, checked_config(s).precision,
                                   rt.output);
    return abi::kOk;
  }

 private:
  static ReplicationConfig checked_config(S& s) {
    const ReplicationConfig config = replication_config_of(s);
    if (!(std::isfinite(config.precision) && config.precision > 0)) {
      panic(
          "replication_config(): precision must be a finite number > 0 "
          "(got " +
          std::to_string(config.precision) + ")");
    }
    return config;
  }
};

}  // namespace tessera::detail

// Used by TESSERA_SHARD: checks that the hooks come in workable sets, then
// defines the exports for those the class has.
#define TESSERA_DETAIL_INTEREST_EXPORTS(Type)                                 \
  static_assert(                                                              \
      !::tessera::HasInterest<Type> || ::tessera::HasInterestArea<Type>,      \
      "TESSERA_SHARD(" #Type                                                  \
      "): interest() needs `std::optional<tessera::InterestArea> "            \
      "interest_area(std::string_view subscriber_id) const`");                \
  static_assert(!::tessera::HasInterest<Type> ||                              \
                    ::tessera::HasEntities<Type> ||                           \
                    ::tessera::HasReplicated<Type>,                           \
                "TESSERA_SHARD(" #Type                                        \
                "): interest() needs `void "                                  \
                "entities(std::vector<tessera::EntityPos>& out) const`, or "  \
                "`tessera::Replicated* replicated()` to take the positions "  \
                "from the store");                                            \
  static_assert(                                                              \
      ::tessera::HasInterest<Type> ||                                         \
          !(::tessera::HasEntities<Type> ||                                   \
            ::tessera::HasInterestArea<Type> || ::tessera::HasCanSee<Type> || \
            ::tessera::HasSnapshotVisible<Type>),                             \
      "TESSERA_SHARD(" #Type                                                  \
      "): entities(), interest_area(), can_see() and "                        \
      "snapshot_visible() need `std::optional<"                               \
      "tessera::InterestConfig> interest() const`");                          \
  static_assert(::tessera::HasReplicated<Type> ||                             \
                    !::tessera::HasReplicationConfig<Type>,                   \
                "TESSERA_SHARD(" #Type                                        \
                "): replication_config() needs `tessera::Replicated* "        \
                "replicated()`");                                             \
  template struct ::tessera::detail::InterestExports<Type>;                   \
  template struct ::tessera::detail::FilterExport<Type>;                      \
  template struct ::tessera::detail::SnapshotVisibleExport<Type>;             \
  template struct ::tessera::detail::ReplicationExports<Type>

#endif  // TESSERA_INTEREST_EXPORT_H_
