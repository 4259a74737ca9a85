// Loading the guests tests/rust compares (Rust guests and their C++
// originals) and encoding their params and inputs.
#ifndef TESSERA_TESTS_RUST_RUST_GUESTS_H_
#define TESSERA_TESTS_RUST_RUST_GUESTS_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "shard/guest_shard.h"
#include "wasm/loader.h"

namespace tessera::shard::rust_test {

// The module at `path` with the shard policy, fuel and a memory cap of
// memory_mb (a failed gtest expectation and nullptr when it cannot load).
std::shared_ptr<const wasm::CompiledModule> Load(const std::string& path,
                                                 uint32_t memory_mb);

KindConfig Kind(const std::string& name, Codec codec);

// `value` as the codec's bytes (MessagePack or JSON text).
std::string Encode(Codec codec, const nlohmann::json& value);

}  // namespace tessera::shard::rust_test

#endif  // TESSERA_TESTS_RUST_RUST_GUESTS_H_
