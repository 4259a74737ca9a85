#include "realm/limits.h"

#include <algorithm>
#include <vector>

#include "realm/config_fields.h"

namespace tessera::realm {
namespace {

constexpr int64_t kMicro = 1000000;

struct LimitField {
  const char* key;
  int64_t RealmLimits::*field;
  int64_t LimitCaps::*cap;
};

constexpr LimitField kFields[] = {
    {"maxPatchesPerFrame", &RealmLimits::max_patches_per_frame,
     &LimitCaps::max_patches_per_frame},
    {"maxFrameBytes", &RealmLimits::max_frame_bytes,
     &LimitCaps::max_frame_bytes},
    {"maxRecordKeyLength", &RealmLimits::max_record_key_length,
     &LimitCaps::max_record_key_length},
    {"maxExpandedLeaves", &RealmLimits::max_expanded_leaves,
     &LimitCaps::max_expanded_leaves},
    {"writeRatePerSecond", &RealmLimits::write_rate_per_second,
     &LimitCaps::write_rate_per_second},
    {"writeRateBurst", &RealmLimits::write_rate_burst,
     &LimitCaps::write_rate_burst},
    {"maxBreachesBeforeDetach", &RealmLimits::max_breaches_before_detach,
     &LimitCaps::max_breaches_before_detach},
};

// The longest key in `value` (object keys at any depth) and its leaves
// (scalars and empty containers), counted without recursion; stops
// counting leaves past `max_leaves`.
void Measure(const Json& value, int64_t max_leaves, size_t* longest_key,
             int64_t* leaves) {
  std::vector<const Json*> stack{&value};
  while (!stack.empty() && *leaves <= max_leaves) {
    const Json* v = stack.back();
    stack.pop_back();
    if (!v->is_structured() || v->empty()) {
      ++*leaves;
      continue;
    }
    if (v->is_object()) {
      for (auto it = v->begin(); it != v->end(); ++it) {
        *longest_key = std::max(*longest_key, it.key().size());
        stack.push_back(&it.value());
      }
    } else {
      for (const Json& e : *v) stack.push_back(&e);
    }
  }
}

}  // namespace

Result<RealmLimits> ParseRealmLimits(const Json& limits,
                                     std::string_view where) {
  if (!limits.is_object()) {
    return internal::FieldError(
        where, "", "expected an object, got " + internal::Describe(limits));
  }
  TESSERA_RETURN_IF_ERROR(internal::CheckKnownFields(
      limits, where,
      {"maxPatchesPerFrame", "maxFrameBytes", "maxRecordKeyLength",
       "maxExpandedLeaves", "writeRatePerSecond", "writeRateBurst",
       "maxBreachesBeforeDetach"}));
  RealmLimits out;
  for (const LimitField& f : kFields) {
    bool present = false;
    TESSERA_RETURN_IF_ERROR(internal::ReadInt(
        limits, where, f.key, 1, kLimitCaps.*f.cap, &(out.*f.field), &present));
  }
  return out;
}

Json AdvertisedLimits(const RealmLimits& limits) {
  Json out = Json::object();
  for (const LimitField& f : kFields) {
    if (f.field == &RealmLimits::max_breaches_before_detach) continue;
    out[f.key] = limits.*f.field;
  }
  return out;
}

Status ConnectionIngress::Breach(std::string message) {
  ++breaches_;
  return Status(StatusCode::kResourceExhausted,
                "limits_exceeded: " + std::move(message));
}

void ConnectionIngress::Refill(int64_t now_us) {
  const int64_t capacity = limits_.write_rate_burst * kMicro;
  if (!last_us_) {
    last_us_ = now_us;
    micro_tokens_ = capacity;
    return;
  }
  if (now_us <= *last_us_) return;
  const int64_t elapsed_us = now_us - *last_us_;
  last_us_ = now_us;
  // tokens/s * us = millionths of a token; cap elapsed so it cannot overflow.
  const int64_t to_full_us = capacity / limits_.write_rate_per_second + 1;
  micro_tokens_ =
      elapsed_us >= to_full_us
          ? capacity
          : std::min(capacity, micro_tokens_ +
                                   elapsed_us * limits_.write_rate_per_second);
}

Status ConnectionIngress::Admit(size_t frame_bytes, const Patch& patch,
                                int64_t now_us) {
  Refill(now_us);
  const RealmLimits& l = limits_;
  if (frame_bytes > static_cast<size_t>(l.max_frame_bytes)) {
    return Breach("maxFrameBytes: the frame is " + std::to_string(frame_bytes) +
                  " bytes, at most " + std::to_string(l.max_frame_bytes));
  }
  if (patch.size() > static_cast<size_t>(l.max_patches_per_frame)) {
    return Breach("maxPatchesPerFrame: " + std::to_string(patch.size()) +
                  " ops in one frame, at most " +
                  std::to_string(l.max_patches_per_frame) +
                  "; split the write");
  }
  const size_t max_key = static_cast<size_t>(l.max_record_key_length);
  for (size_t i = 0; i < patch.size(); ++i) {
    const Op& op = patch[i];
    size_t longest = 0;
    for (const PathSegment& s : op.path) {
      if (const std::string* key = std::get_if<std::string>(&s)) {
        longest = std::max(longest, key->size());
      }
    }
    int64_t leaves = 0;
    Measure(op.value, l.max_expanded_leaves, &longest, &leaves);
    if (longest > max_key) {
      return Breach("maxRecordKeyLength: op " + std::to_string(i) +
                    " has a key of " + std::to_string(longest) +
                    " bytes, at most " + std::to_string(max_key));
    }
    if (leaves > l.max_expanded_leaves) {
      return Breach("maxExpandedLeaves: op " + std::to_string(i) +
                    " expands to more than " +
                    std::to_string(l.max_expanded_leaves) + " leaves");
    }
  }
  if (micro_tokens_ < kMicro) {
    const int64_t wait_us =
        (kMicro - micro_tokens_ + l.write_rate_per_second - 1) /
        l.write_rate_per_second;
    return Breach("writeRatePerSecond: more than " +
                  std::to_string(l.write_rate_per_second) +
                  " writes/s (burst " + std::to_string(l.write_rate_burst) +
                  "); retry in " + std::to_string((wait_us + 999) / 1000) +
                  " ms");
  }
  micro_tokens_ -= kMicro;
  return Status::Ok();
}

}  // namespace tessera::realm
