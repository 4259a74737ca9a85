#include "wasm/testing/wat.h"

#include <wabt/binary-writer.h>
#include <wabt/error-formatter.h>
#include <wabt/feature.h>
#include <wabt/ir.h>
#include <wabt/resolve-names.h>
#include <wabt/stream.h>
#include <wabt/wast-lexer.h>
#include <wabt/wast-parser.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tessera::wasm::testing {

std::vector<uint8_t> Wat(std::string_view text) {
  wabt::Errors errors;
  auto lexer = wabt::WastLexer::CreateBufferLexer("test.wat", text.data(),
                                                  text.size(), &errors);
  wabt::Features features;
  features.EnableAll();
  wabt::WastParseOptions opts(features);
  std::unique_ptr<wabt::Module> module;
  bool ok = wabt::Succeeded(
      wabt::ParseWatModule(lexer.get(), &module, &errors, &opts));
  ok = ok && wabt::Succeeded(wabt::ResolveNamesModule(module.get(), &errors));
  if (!ok) {
    fprintf(stderr, "bad test WAT:\n%s\n%s\n",
            FormatErrorsToString(errors, wabt::Location::Type::Text).c_str(),
            std::string(text).c_str());
    abort();
  }
  wabt::MemoryStream stream;
  wabt::WriteBinaryOptions wopts(features, true, false, false);
  if (!wabt::Succeeded(wabt::WriteBinaryModule(&stream, module.get(), wopts))) {
    fprintf(stderr, "cannot write test module\n");
    abort();
  }
  return stream.output_buffer().data;
}

std::vector<uint8_t> ShardWat(std::string_view extra, std::string_view imports,
                              std::string_view memory) {
  std::string text = "(module\n";
  text += imports;
  text += "\n";
  text += memory;
  text += R"(
  (export "memory" (memory 0))
  (func (export "tessera_abi_v1"))
  (func (export "tessera_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tessera_init") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_apply_input") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_tick") (param i64) (result i32) (i32.const 0))
  (func (export "tessera_snapshot") (result i32) (i32.const 0))
  (func (export "tessera_output_ptr") (result i32) (i32.const 0))
  (func (export "tessera_output_len") (result i32) (i32.const 0))
)";
  text += extra;
  text += ")\n";
  return Wat(text);
}

}  // namespace tessera::wasm::testing
