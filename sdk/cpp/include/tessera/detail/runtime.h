// The state every export shares: the output buffer, the codec, argument
// buffers and the one shard instance. Used by tessera/export.h and
// tessera/interest_export.h; shard code does not need it.
#ifndef TESSERA_DETAIL_RUNTIME_H_
#define TESSERA_DETAIL_RUNTIME_H_

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/abi.h"
#include "tessera/log.h"

// Marks a static member function as the wasm export `name`; nothing in
// native builds, where tests call the functions directly.
#if defined(__wasm__)
#define TESSERA_DETAIL_EXPORT(name) __attribute__((export_name(name)))
#else
#define TESSERA_DETAIL_EXPORT(name)
#endif

namespace tessera::detail {

// An address or size in guest memory: i32 on wasm32.
using GuestPtr = std::uintptr_t;
using GuestLen = std::uint32_t;

// State shared by all exports. Never destroyed.
struct Runtime {
  std::string output;  // what tessera_output_ptr/len return
  abi::Codec codec = abi::kCodecMsgpack;
};
inline Runtime& runtime() {
  static Runtime* state = new Runtime();
  return *state;
}

// An argument buffer from tessera_alloc, freed when the call returns.
class ArgBuffer {
 public:
  ArgBuffer(GuestPtr ptr, GuestLen len) : ptr_(ptr), len_(len) {}
  ArgBuffer(const ArgBuffer&) = delete;
  ArgBuffer& operator=(const ArgBuffer&) = delete;
  ~ArgBuffer() { std::free(reinterpret_cast<void*>(ptr_)); }

  std::string_view view() const {
    if (ptr_ == 0) return {};
    return {reinterpret_cast<const char*>(ptr_), len_};
  }

 private:
  GuestPtr ptr_;
  GuestLen len_;
};

inline std::int32_t fail_with(std::string_view text) {
  runtime().output.assign(text.data(), text.size());
  return abi::kError;
}

template <class S>
std::optional<S>& shard_instance() {
  static std::optional<S>* instance = new std::optional<S>();
  return *instance;
}

template <class S>
S& started_shard(const char* call) {
  std::optional<S>& instance = shard_instance<S>();
  if (!instance) {
    panic(std::string(call) + " called before tessera_init/tessera_restore");
  }
  return *instance;
}

}  // namespace tessera::detail

#endif  // TESSERA_DETAIL_RUNTIME_H_
