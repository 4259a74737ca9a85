// The `spectest` import module the spec scripts expect: print functions
// (which print nothing), four immutable globals, a table and a memory. One
// per script, shared by its modules, as in the reference interpreter.
#ifndef TESSERA_TESTS_SPEC_SPECTEST_HOST_H_
#define TESSERA_TESTS_SPEC_SPECTEST_HOST_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "wasm/link.h"
#include "wasm/rt/wasm-rt.h"

namespace tessera::spec {

class Spectest {
 public:
  // Allocates the memory (1 page, max 2) and the table (10 funcrefs, max
  // 20). Aborts if the runtime cannot reserve them.
  Spectest();
  ~Spectest();
  Spectest(const Spectest&) = delete;
  Spectest& operator=(const Spectest&) = delete;

  // The export `field`; valid while this object lives.
  // Errors: kNotFound ("unknown import").
  Result<wasm::Extern> Get(const std::string& field);

 private:
  wasm_rt_memory_t memory_{};
  wasm_rt_funcref_table_t table_{};
  uint32_t global_i32_ = 666;
  uint64_t global_i64_ = 666;
  float global_f32_ = 666.6f;
  double global_f64_ = 666.6;
};

}  // namespace tessera::spec

#endif  // TESSERA_TESTS_SPEC_SPECTEST_HOST_H_
