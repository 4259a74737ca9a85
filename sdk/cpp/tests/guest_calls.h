// Test-only helpers of the SDK's native tests (sdk_export_test.cc,
// sdk_interest_test.cc, sdk_rewind_test.cc): the exports called as the host
// calls them, and little-endian expected bytes written independently of the
// SDK's writer (the layouts of docs/guest-abi.md).
#ifndef TESSERA_SDK_CPP_TESTS_GUEST_CALLS_H_
#define TESSERA_SDK_CPP_TESTS_GUEST_CALLS_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/shard_sdk.h"

namespace sdk_test {

// Little-endian expected bytes.
class Bytes {
 public:
  Bytes& u8(unsigned v) {
    s_.push_back(static_cast<char>(v));
    return *this;
  }
  Bytes& u32(std::uint32_t v) { return le(v, 4); }
  Bytes& u64(std::uint64_t v) { return le(v, 8); }
  Bytes& f32(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return le(bits, 4);
  }
  Bytes& f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return le(bits, 8);
  }
  Bytes& str(std::string_view v) {
    u32(static_cast<std::uint32_t>(v.size()));
    s_.append(v);
    return *this;
  }
  Bytes& raw(std::string_view v) {
    s_.append(v);
    return *this;
  }
  Bytes& ids(std::vector<std::uint64_t> v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (std::uint64_t id : v) u64(id);
    return *this;
  }
  // A changed entity's position: what = POS (| NEW), then three f64.
  Bytes& pos(double x, double y, double z) { return f64(x).f64(y).f64(z); }
  // A component set (len_plus_one = len + 1) or removed (0).
  Bytes& set(unsigned component, std::string_view bytes) {
    return u8(component)
        .u32(static_cast<std::uint32_t>(bytes.size()) + 1)
        .raw(bytes);
  }
  Bytes& unset(unsigned component) { return u8(component).u32(0); }
  // A rewind entity: id, then x, y, z as f64.
  Bytes& entity(std::uint64_t id, double x, double y, double z) {
    return u64(id).f64(x).f64(y).f64(z);
  }
  operator std::string() const { return s_; }

 private:
  Bytes& le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  std::string s_;
};

// What the host does with an argument: tessera_alloc, then copy the bytes
// in. S: any shard of the test binary (the buffers are the guest's, not the
// shard's).
template <class S>
struct Arg {
  explicit Arg(std::string_view bytes)
      : ptr(tessera::detail::Exports<S>::alloc(
            static_cast<tessera::detail::GuestLen>(bytes.size()))),
        len(static_cast<tessera::detail::GuestLen>(bytes.size())) {
    std::memcpy(reinterpret_cast<void*>(ptr), bytes.data(), bytes.size());
  }
  tessera::detail::GuestPtr ptr;
  tessera::detail::GuestLen len;
};

// The guest's output buffer (tessera_output_ptr, tessera_output_len).
template <class S>
std::string Output() {
  using tessera::detail::Exports;
  return std::string(reinterpret_cast<const char*>(Exports<S>::output_ptr()),
                     Exports<S>::output_len());
}

// tessera_init of shard S.
template <class S>
int Init(int codec, std::string_view id, std::string_view params) {
  const Arg<S> a(id), b(params);
  return tessera::detail::Exports<S>::init(codec, a.ptr, a.len, b.ptr, b.len);
}

}  // namespace sdk_test

#endif  // TESSERA_SDK_CPP_TESTS_GUEST_CALLS_H_
