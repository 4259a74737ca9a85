#include "spec_values.h"

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace tessera::spec {
namespace {

constexpr uint32_t kF32Exponent = 0x7f800000u;
constexpr uint32_t kF32Quiet = 0x00400000u;
constexpr uint64_t kF64Exponent = 0x7ff0000000000000ull;
constexpr uint64_t kF64Quiet = 0x0008000000000000ull;

bool ParseU64(const std::string& s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Result<uint64_t> ToRaw(const Value& v) {
  if ((v.type == "funcref" || v.type == "externref") && v.value == "null") {
    return uint64_t{0};
  }
  uint64_t bits = 0;
  if (!ParseU64(v.value, &bits)) {
    return InvalidArgument("cannot pass " + v.type + " value `" + v.value +
                           "`");
  }
  if (v.type == "i32" || v.type == "f32") return bits & 0xffffffffu;
  if (v.type == "i64" || v.type == "f64" || v.type == "externref") {
    return bits;
  }
  return InvalidArgument("cannot pass a value of type " + v.type);
}

bool Matches(const Value& expected, uint64_t got) {
  const bool canonical = expected.value == "nan:canonical";
  const bool arithmetic = expected.value == "nan:arithmetic";
  if (expected.type == "f32" && (canonical || arithmetic)) {
    uint32_t b = static_cast<uint32_t>(got);
    uint32_t payload = b & 0x007fffffu;
    if ((b & kF32Exponent) != kF32Exponent) return false;
    return canonical ? payload == kF32Quiet : (payload & kF32Quiet) != 0;
  }
  if (expected.type == "f64" && (canonical || arithmetic)) {
    uint64_t payload = got & 0x000fffffffffffffull;
    if ((got & kF64Exponent) != kF64Exponent) return false;
    return canonical ? payload == kF64Quiet : (payload & kF64Quiet) != 0;
  }
  auto want = ToRaw(expected);
  if (!want.ok()) return false;
  if (expected.type == "i32" || expected.type == "f32") {
    return static_cast<uint32_t>(got) == static_cast<uint32_t>(*want);
  }
  return got == *want;
}

std::string Describe(const std::string& type, uint64_t raw) {
  char buf[96];
  if (type == "i32") {
    std::snprintf(buf, sizeof buf, "i32:%" PRIu32 " (0x%08" PRIx32 ")",
                  static_cast<uint32_t>(raw), static_cast<uint32_t>(raw));
  } else if (type == "f32") {
    uint32_t b = static_cast<uint32_t>(raw);
    float f;
    std::memcpy(&f, &b, 4);
    std::snprintf(buf, sizeof buf, "f32:0x%08" PRIx32 " (%.9g)", b, f);
  } else if (type == "f64") {
    double d;
    std::memcpy(&d, &raw, 8);
    std::snprintf(buf, sizeof buf, "f64:0x%016" PRIx64 " (%.17g)", raw, d);
  } else {
    std::snprintf(buf, sizeof buf, "%s:%" PRIu64 " (0x%" PRIx64 ")",
                  type.c_str(), raw, raw);
  }
  return buf;
}

}  // namespace tessera::spec
