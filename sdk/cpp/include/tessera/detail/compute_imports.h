// The tessera_compute_v1 host functions as C declarations (the ABI in
// include/tessera/compute_abi.h and docs/compute-abi.md). Module code uses
// the wrappers of tessera/compute.h instead.
#ifndef TESSERA_DETAIL_COMPUTE_IMPORTS_H_
#define TESSERA_DETAIL_COMPUTE_IMPORTS_H_

#include <cstdint>

#define TESSERA_DETAIL_COMPUTE_IMPORT(name) \
  __attribute__((import_module("tessera_compute_v1"), import_name(name)))

extern "C" {
TESSERA_DETAIL_COMPUTE_IMPORT("log")
void tessera_compute_v1_log(std::int32_t level, const char* ptr,
                            std::int32_t len);
TESSERA_DETAIL_COMPUTE_IMPORT("now_ms")
std::int64_t tessera_compute_v1_now_ms();
TESSERA_DETAIL_COMPUTE_IMPORT("random_bytes")
std::int32_t tessera_compute_v1_random_bytes(char* ptr, std::int32_t len);
TESSERA_DETAIL_COMPUTE_IMPORT("state_get")
std::int32_t tessera_compute_v1_state_get(char* ptr, std::int32_t cap);
TESSERA_DETAIL_COMPUTE_IMPORT("state_set")
std::int32_t tessera_compute_v1_state_set(const char* ptr, std::int32_t len);
TESSERA_DETAIL_COMPUTE_IMPORT("emit_event")
std::int32_t tessera_compute_v1_emit_event(const char* name_ptr,
                                           std::int32_t name_len,
                                           const char* payload_ptr,
                                           std::int32_t payload_len);
TESSERA_DETAIL_COMPUTE_IMPORT("emit_channel")
std::int32_t tessera_compute_v1_emit_channel(const char* channel_ptr,
                                             std::int32_t channel_len,
                                             const char* payload_ptr,
                                             std::int32_t payload_len);
TESSERA_DETAIL_COMPUTE_IMPORT("emit_spatial")
std::int32_t tessera_compute_v1_emit_spatial(const char* shard_ptr,
                                             std::int32_t shard_len, float x,
                                             float y, float radius,
                                             const char* payload_ptr,
                                             std::int32_t payload_len);
TESSERA_DETAIL_COMPUTE_IMPORT("last_error")
std::int32_t tessera_compute_v1_last_error(char* ptr, std::int32_t cap);
// The app's data and shards (tessera/compute_data.h). A module that never
// calls these does not import them (the linker drops unused imports), and
// the host runs its entry calls without a data transaction.
TESSERA_DETAIL_COMPUTE_IMPORT("data")
std::int32_t tessera_compute_v1_data(const char* op_ptr, std::int32_t op_len,
                                     const char* req_ptr, std::int32_t req_len);
TESSERA_DETAIL_COMPUTE_IMPORT("shards")
std::int32_t tessera_compute_v1_shards(const char* op_ptr, std::int32_t op_len,
                                       const char* req_ptr,
                                       std::int32_t req_len);
TESSERA_DETAIL_COMPUTE_IMPORT("reply")
std::int32_t tessera_compute_v1_reply(char* ptr, std::int32_t cap);
}

#undef TESSERA_DETAIL_COMPUTE_IMPORT

#endif  // TESSERA_DETAIL_COMPUTE_IMPORTS_H_
