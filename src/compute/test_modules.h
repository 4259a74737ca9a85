// Test-only: small compute module sources for the compile tests (what a
// deploy uploads), valid under the source rules.
#ifndef TESSERA_COMPUTE_TEST_MODULES_H_
#define TESSERA_COMPUTE_TEST_MODULES_H_

#include <string>

#include "compute/source_compiler.h"

namespace tessera::compute::testing {

// A C++ module exporting the tessera_compute_v1 entry points by hand.
inline SourceFiles CppModule() {
  return {
      {"module.cc",
       "#include <cstdint>\n"
       "#include \"module.h\"\n"
       "\n"
       "namespace {\n"
       "char g_buffer[4096];\n"
       "int32_t g_output_len = 0;\n"
       "}  // namespace\n"
       "\n"
       "extern \"C\" {\n"
       "TESSERA_EXPORT(\"tessera_compute_abi_v1\") void AbiMarker() {}\n"
       "TESSERA_EXPORT(\"tessera_alloc\") int32_t Alloc(int32_t n) {\n"
       "  return n <= 4096 ? reinterpret_cast<int32_t>(g_buffer) : 0;\n"
       "}\n"
       "TESSERA_EXPORT(\"tessera_output_ptr\") int32_t OutputPtr() {\n"
       "  return reinterpret_cast<int32_t>(g_buffer);\n"
       "}\n"
       "TESSERA_EXPORT(\"tessera_output_len\") int32_t OutputLen() {\n"
       "  return g_output_len;\n"
       "}\n"
       "TESSERA_EXPORT(\"tessera_compute_init\") int32_t Init() { return 0; }\n"
       "TESSERA_EXPORT(\"tessera_compute_tick\") int32_t Tick(int32_t) {\n"
       "  return 0;\n"
       "}\n"
       "TESSERA_EXPORT(\"tessera_compute_invoke\") int32_t Invoke(int32_t,\n"
       "                                                          int32_t "
       "len) {\n"
       "  g_output_len = len;  // echo: the input is in g_buffer\n"
       "  return 0;\n"
       "}\n"
       "}\n"},
      {"module.h",
       "#pragma once\n"
       "#define TESSERA_EXPORT(name) __attribute__((export_name(name)))\n"}};
}

}  // namespace tessera::compute::testing

#endif  // TESSERA_COMPUTE_TEST_MODULES_H_
