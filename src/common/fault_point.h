// A test-only hook that kills this process at a named point, so tests can
// prove what survives a crash at exactly that moment (the transfer crash
// matrix: tests/e2e/transfer_crash_test.cc starts the real server with the
// variable set, then restarts it on the same store).
//
// FaultPoint(name) does nothing unless the environment variable
// TESSERA_FAULT_POINT (read once, at the first call in the process) names
// this point:
//   TESSERA_FAULT_POINT=<name>    fires at the first hit of <name>;
//   TESSERA_FAULT_POINT=<name>@N  fires at the N-th hit (1-based; hits of
//                                 other names do not count).
// Firing writes one line "fault point <name>: killing this process" to
// stderr and raises SIGKILL: a real kill -9 (no destructors, no atexit, no
// flushing of buffered stdio). A value with a malformed count ("x@0",
// "x@abc") arms nothing and writes one warning line at the first call.
//
// Cost when unset: one check of a static per call. Thread-safety: any
// thread; hits are counted atomically, so the N-th hit fires exactly once
// however many threads pass the point.
#ifndef TESSERA_COMMON_FAULT_POINT_H_
#define TESSERA_COMMON_FAULT_POINT_H_

#include <string_view>

namespace tessera {

inline constexpr char kFaultPointEnv[] = "TESSERA_FAULT_POINT";

void FaultPoint(std::string_view name);

}  // namespace tessera

#endif  // TESSERA_COMMON_FAULT_POINT_H_
