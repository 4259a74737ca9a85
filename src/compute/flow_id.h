// Flow ids: one per entry call from outside (an invoke, a trigger's event,
// an external event), carried by every run, log line and event it causes
// (docs/compute.md "Monitoring").
#ifndef TESSERA_COMPUTE_FLOW_ID_H_
#define TESSERA_COMPUTE_FLOW_ID_H_

#include <string>
#include <string_view>

namespace tessera::compute {

// 16 lowercase hex digits from a CSPRNG-seeded generator. Thread-safe.
std::string NewFlowId();
// Whether `id` could be a caller-supplied flow id: 1..64 of [A-Za-z0-9_-].
bool IsValidFlowId(std::string_view id);

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_FLOW_ID_H_
