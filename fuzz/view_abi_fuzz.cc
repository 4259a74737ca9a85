// libFuzzer target: the interest hooks' binary layouts (src/shard/view_abi.h,
// docs/guest-abi.md "Interest and replication"): the parsers of what a guest
// returns (untrusted bytes) and the encoders of what the host passes in.
//
// The first byte picks the parser, the rest is its input. Besides memory
// safety it checks:
//  - a refusal is kInvalidArgument, names the hook and says why;
//  - whatever a parser accepts obeys the documented rules (sizes, finite
//    numbers, ids unique and below 2^53, flags known) and re-encodes to the
//    same bytes, so nothing is silently dropped or reinterpreted;
//  - the same bytes always give the same verdict;
//  - the encoders' output has the documented layout and reads back to what
//    was encoded.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shard/view_abi.h"

namespace {

using namespace tessera;
using namespace tessera::shard;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "view_abi_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

template <typename T>
void Put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian hosts only (as the ABI)
  out.append(b, sizeof(T));
}

// Reads the encoders' output back (little-endian).
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  template <typename T>
  T Get() {
    Check(s_.size() >= sizeof(T), "an encoder's output is short");
    T v;
    std::memcpy(&v, s_.data(), sizeof(T));
    s_.remove_prefix(sizeof(T));
    return v;
  }
  std::string_view Str() {
    uint32_t n = Get<uint32_t>();
    Check(s_.size() >= n, "an encoded string is short");
    std::string_view out = s_.substr(0, n);
    s_.remove_prefix(n);
    return out;
  }
  std::vector<uint64_t> Ids() {
    std::vector<uint64_t> ids(Get<uint32_t>());
    for (uint64_t& id : ids) id = Get<uint64_t>();
    return ids;
  }
  bool AtEnd() const { return s_.empty(); }

 private:
  std::string_view s_;
};

void CheckRefusal(const Status& s, const char* hook) {
  Check(s.code() == StatusCode::kInvalidArgument,
        "a refusal is not kInvalidArgument");
  Check(s.message().rfind(std::string(hook) + " output: ", 0) == 0,
        "a refusal does not name its hook");
  Check(s.message().size() > std::strlen(hook) + 9,
        "a refusal does not say why");
}

void FuzzInterestConfig(std::string_view in) {
  Result<GuestInterestConfig> c = ParseInterestConfig(in);
  Result<GuestInterestConfig> again = ParseInterestConfig(in);
  Check(c.ok() == again.ok(), "the same bytes got two verdicts");
  if (!c.ok()) {
    CheckRefusal(c.status(), "tessera_interest_config");
    Check(c.status().message() == again.status().message(),
          "the same bytes got two messages");
    return;
  }
  Check(in.size() == 17, "accepted a config that is not 17 bytes");
  Check(std::isfinite(c->cell_size) && c->cell_size > 0,
        "accepted a cell_size that is not finite and above 0");
  Check(std::isfinite(c->margin) && c->margin >= 0,
        "accepted a margin that is not finite and 0 or more");
  std::string out;
  Put(out, c->cell_size);
  Put(out, c->margin);
  Put(out, static_cast<uint8_t>(c->shared_snapshots ? 1 : 0));
  Check(out == in, "an accepted config does not re-encode to its bytes");
}

void FuzzEntities(std::string_view in) {
  std::vector<GuestEntity> entities, again;
  Status s = ParseEntities(in, entities);
  Status s2 = ParseEntities(in, again);
  Check(s.ok() == s2.ok() && s.message() == s2.message(),
        "the same bytes got two verdicts");
  if (!s.ok()) {
    CheckRefusal(s, "tessera_entities");
    return;
  }
  Check(in.size() == 4 + 20 * entities.size(),
        "accepted entities whose size is not 4 + 20 x count");
  std::set<uint64_t> ids;
  std::string out;
  Put(out, static_cast<uint32_t>(entities.size()));
  for (const GuestEntity& e : entities) {
    Check(e.id <= kMaxEntityId, "accepted an entity id of 2^53 or more");
    Check(ids.insert(e.id).second, "accepted an entity id twice");
    Check(std::isfinite(e.x) && std::isfinite(e.y),
          "accepted a non-finite position");
    Put(out, e.id);
    Put(out, e.generation);
    Put(out, e.x);
    Put(out, e.y);
  }
  Check(out == in, "accepted entities do not re-encode to their bytes");
}

void FuzzAreas(std::string_view in) {
  // The count the host passes is its subscriber count: the fuzzer tries the
  // one that fits the bytes and one that does not.
  const size_t fits = in.size() / 13;
  for (size_t count : {fits, fits + 1}) {
    std::vector<std::optional<GuestArea>> areas;
    Status s = ParseAreas(in, count, areas);
    if (!s.ok()) {
      CheckRefusal(s, "tessera_interest_areas");
      continue;
    }
    Check(in.size() == 13 * count, "accepted areas of the wrong size");
    Check(areas.size() == count, "an area per subscriber");
    for (size_t i = 0; i < count; ++i) {
      const uint8_t has = static_cast<uint8_t>(in[13 * i]);
      Check(has <= 1, "accepted a has_area other than 0 or 1");
      Check(areas[i].has_value() == (has == 1),
            "an area is present exactly when has_area is 1");
      if (!areas[i]) continue;
      const GuestArea& a = *areas[i];
      Check(std::isfinite(a.x) && std::isfinite(a.y) &&
                std::isfinite(a.radius) && a.radius >= 0,
            "accepted a non-finite area or a negative radius");
      std::string out;
      Put(out, has);
      Put(out, a.x);
      Put(out, a.y);
      Put(out, a.radius);
      Check(out == in.substr(13 * i, 13),
            "an accepted area does not re-encode to its bytes");
    }
  }
}

// Splits the input into subscriber ids and id lists for the encoders.
void FuzzEncoders(std::string_view in) {
  std::vector<std::string> subscribers;
  std::vector<std::vector<uint64_t>> candidates;
  while (!in.empty() && subscribers.size() < 64) {
    size_t n =
        std::min<size_t>(static_cast<uint8_t>(in[0]) % 16, in.size() - 1);
    subscribers.emplace_back(in.substr(1, n));
    in.remove_prefix(1 + n);
    std::vector<uint64_t> ids;
    while (in.size() >= 8 && ids.size() < static_cast<size_t>(n)) {
      uint64_t id;
      std::memcpy(&id, in.data(), 8);
      ids.push_back(id);
      in.remove_prefix(8);
    }
    candidates.push_back(std::move(ids));
  }

  const std::string list_bytes = EncodeSubscriberList(subscribers);
  Reader list(list_bytes);
  Check(list.Get<uint32_t>() == subscribers.size(), "subscriber count");
  for (const std::string& s : subscribers) {
    Check(list.Str() == s, "a subscriber id reads back differently");
  }
  Check(list.AtEnd(), "trailing bytes after the subscriber list");

  std::vector<std::span<const uint64_t>> spans(candidates.begin(),
                                               candidates.end());
  const std::string filter_bytes = EncodeFilterRequest(subscribers, spans);
  Reader filter(filter_bytes);
  Check(filter.Get<uint32_t>() == subscribers.size(), "filter count");
  for (size_t i = 0; i < subscribers.size(); ++i) {
    Check(filter.Str() == subscribers[i], "a filter subscriber reads back");
    Check(filter.Ids() == candidates[i], "a filter id list reads back");
  }
  Check(filter.AtEnd(), "trailing bytes after the filter request");

  if (subscribers.empty()) return;
  const std::vector<uint64_t> none;
  const std::vector<uint64_t>& visible = candidates[0];
  const std::vector<uint64_t>& entered =
      candidates.size() > 1 ? candidates[1] : none;
  const std::vector<uint64_t>& left =
      candidates.size() > 2 ? candidates[2] : none;
  const std::string view_bytes =
      EncodeViewRequest(subscribers[0], visible, entered, left);
  Reader view(view_bytes);
  Check(view.Str() == subscribers[0], "the view's subscriber reads back");
  Check(view.Ids() == visible, "visible reads back");
  Check(view.Ids() == entered, "entered reads back");
  Check(view.Ids() == left, "left reads back");
  Check(view.AtEnd(), "trailing bytes after the view request");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzInterestConfig(in);
      break;
    case 1:
      FuzzEntities(in);
      break;
    case 2:
      FuzzAreas(in);
      break;
    default:
      FuzzEncoders(in);
      break;
  }
  return 0;
}
