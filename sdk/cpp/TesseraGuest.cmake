# Builds tessera guest modules (wasm32) from C++ with the guest SDK, using the
# recipe in sdk/cpp/BUILD.md.
#
#   include(sdk/cpp/TesseraGuest.cmake)
#   tessera_add_guest(counter_guest
#     OUTPUT ${CMAKE_BINARY_DIR}/guests/counter.wasm
#     SOURCES ${CMAKE_SOURCE_DIR}/tests/guests/counter/counter.cc)
#
# Defines a target (built by ALL) whose output is the .wasm file; the SDK's
# runtime sources (src/operator_new.cc, src/wasi_stubs.c) are compiled into
# each guest. Tools: clang++/clang/wasm-ld from LLVM 14 and the sysroot of
# Debian's wasi-libc, libc++-14-dev-wasm32, libc++abi-14-dev-wasm32 and
# libclang-rt-14-dev-wasm32 (scripts/install-deps).
# Override TESSERA_WASI_SYSROOT or the TESSERA_GUEST_* cache entries to use
# another toolchain.
#
# When the toolchain is missing, configuring fails and says what to install,
# unless TESSERA_GUEST_REQUIRED is OFF: then TESSERA_GUEST_TOOLCHAIN_FOUND is
# FALSE and every guest target fails when it is built (with the same
# message), so whatever needs a guest, a test above all, fails loudly instead
# of being skipped, while targets that need no guest still build.
include_guard(GLOBAL)

set(TESSERA_GUEST_SDK_DIR "${CMAKE_CURRENT_LIST_DIR}")
# tessera/abi.h, shared with the host: include/ of the source tree (two
# levels up), or the SDK's own include/ in an installed copy.
if(EXISTS "${TESSERA_GUEST_SDK_DIR}/include/tessera/abi.h")
  set(TESSERA_GUEST_ABI_INCLUDE_DIR "${TESSERA_GUEST_SDK_DIR}/include")
else()
  get_filename_component(TESSERA_GUEST_ABI_INCLUDE_DIR
                         "${TESSERA_GUEST_SDK_DIR}/../../include" ABSOLUTE)
endif()

find_program(TESSERA_GUEST_CXX NAMES clang++-14 clang++)
find_program(TESSERA_GUEST_CC NAMES clang-14 clang)
find_program(TESSERA_GUEST_WASM_LD NAMES wasm-ld-14 wasm-ld)
set(TESSERA_WASI_SYSROOT "/usr" CACHE PATH
    "Sysroot holding include/wasm32-wasi and lib/wasm32-wasi")
set(TESSERA_GUEST_STACK_BYTES 262144 CACHE STRING
    "Guest shadow stack size in bytes (wasm-ld -z stack-size)")

set(TESSERA_GUEST_TOOLCHAIN_FOUND FALSE)
if(TESSERA_GUEST_CXX AND TESSERA_GUEST_CC AND TESSERA_GUEST_WASM_LD
   AND EXISTS "${TESSERA_WASI_SYSROOT}/lib/wasm32-wasi/libc++.a"
   AND EXISTS "${TESSERA_WASI_SYSROOT}/lib/wasm32-wasi/crt1-reactor.o")
  execute_process(
    COMMAND "${TESSERA_GUEST_CC}" --target=wasm32-wasi
            --sysroot=${TESSERA_WASI_SYSROOT} -print-libgcc-file-name
    OUTPUT_VARIABLE TESSERA_GUEST_BUILTINS
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(EXISTS "${TESSERA_GUEST_BUILTINS}")
    set(TESSERA_GUEST_TOOLCHAIN_FOUND TRUE)
  endif()
endif()
if(NOT DEFINED TESSERA_GUEST_REQUIRED)
  set(TESSERA_GUEST_REQUIRED ON)
endif()
if(NOT TESSERA_GUEST_TOOLCHAIN_FOUND)
  set(missing "")
  foreach(tool TESSERA_GUEST_CXX TESSERA_GUEST_CC TESSERA_GUEST_WASM_LD)
    if(NOT ${tool})
      list(APPEND missing "${tool} (clang++/clang/wasm-ld)")
    endif()
  endforeach()
  foreach(file libc++.a crt1-reactor.o)
    if(NOT EXISTS "${TESSERA_WASI_SYSROOT}/lib/wasm32-wasi/${file}")
      list(APPEND missing "${TESSERA_WASI_SYSROOT}/lib/wasm32-wasi/${file}")
    endif()
  endforeach()
  if(NOT missing)
    list(APPEND missing "the wasm32 compiler-rt builtins "
                        "(clang --target=wasm32-wasi -print-libgcc-file-name)")
  endif()
  list(JOIN missing ", " missing)
  set(TESSERA_GUEST_TOOLCHAIN_MESSAGE
      "no wasm32 guest toolchain (missing: ${missing}). Install it with "
      "scripts/install-deps, or on Debian: apt-get install clang lld "
      "wasi-libc libc++-14-dev-wasm32 libc++abi-14-dev-wasm32 "
      "libclang-rt-14-dev-wasm32, or point TESSERA_WASI_SYSROOT and "
      "TESSERA_GUEST_CXX/CC/WASM_LD at another toolchain")
  string(REPLACE ";" "" TESSERA_GUEST_TOOLCHAIN_MESSAGE
         "${TESSERA_GUEST_TOOLCHAIN_MESSAGE}")
  if(TESSERA_GUEST_REQUIRED)
    message(FATAL_ERROR "tessera: ${TESSERA_GUEST_TOOLCHAIN_MESSAGE}. "
            "(-DTESSERA_BUILD_GUESTS=OFF configures without it; the tests "
            "that need guests then fail to build.)")
  endif()
  message(WARNING "tessera: ${TESSERA_GUEST_TOOLCHAIN_MESSAGE}; every guest "
          "target, and whatever depends on one, will fail to build")
  # A guest target that fails when built, saying why.
  function(tessera_add_guest target)
    cmake_parse_arguments(PARSE_ARGV 1 GUEST "" "OUTPUT" "SOURCES")
    add_custom_target(${target}
      COMMAND "${CMAKE_COMMAND}" -E echo
              "tessera: cannot build guest ${target}: ${TESSERA_GUEST_TOOLCHAIN_MESSAGE}"
      COMMAND "${CMAKE_COMMAND}" -E false
      VERBATIM)
    get_filename_component(output "${GUEST_OUTPUT}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    set_target_properties(${target} PROPERTIES TESSERA_GUEST_WASM "${output}")
  endfunction()
  return()
endif()

# Target features: MVP plus sign-extension and mutable globals; no SIMD,
# threads, bulk memory, reference types or tail calls (the host refuses them).
set(TESSERA_GUEST_TARGET_FLAGS
    --target=wasm32-wasi --sysroot=${TESSERA_WASI_SYSROOT}
    -mcpu=mvp -msign-ext -mmutable-globals -O2)
set(TESSERA_GUEST_CXX_FLAGS
    ${TESSERA_GUEST_TARGET_FLAGS} -std=c++20 -fno-exceptions -fno-rtti
    -Wall -Wextra -Werror -I${TESSERA_GUEST_SDK_DIR}/include
    -I${TESSERA_GUEST_ABI_INCLUDE_DIR})
set(TESSERA_GUEST_C_FLAGS ${TESSERA_GUEST_TARGET_FLAGS} -std=c11 -Wall -Wextra
    -Werror)

function(tessera_add_guest target)
  cmake_parse_arguments(PARSE_ARGV 1 GUEST "" "OUTPUT" "SOURCES")
  if(NOT GUEST_OUTPUT OR NOT GUEST_SOURCES)
    message(FATAL_ERROR
            "tessera_add_guest(${target} OUTPUT <file.wasm> SOURCES <files>)")
  endif()

  file(GLOB_RECURSE sdk_headers CONFIGURE_DEPENDS
       "${TESSERA_GUEST_SDK_DIR}/include/*.h"
       "${TESSERA_GUEST_ABI_INCLUDE_DIR}/tessera/abi.h"
       "${TESSERA_GUEST_ABI_INCLUDE_DIR}/tessera/compute_abi.h")
  set(obj_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}.guest")
  set(objects "")
  foreach(source IN LISTS GUEST_SOURCES)
    get_filename_component(source "${source}" ABSOLUTE)
    get_filename_component(name "${source}" NAME)
    set(object "${obj_dir}/${name}.o")
    add_custom_command(
      OUTPUT "${object}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${obj_dir}"
      COMMAND "${TESSERA_GUEST_CXX}" ${TESSERA_GUEST_CXX_FLAGS}
              -c "${source}" -o "${object}"
      DEPENDS "${source}" ${sdk_headers}
      COMMENT "Compiling wasm32 guest object ${name}"
      VERBATIM)
    list(APPEND objects "${object}")
  endforeach()

  # The SDK's runtime sources, compiled into every guest like its own.
  set(runtime_cxx "${TESSERA_GUEST_SDK_DIR}/src/operator_new.cc")
  set(object "${obj_dir}/tessera_operator_new.o")
  add_custom_command(
    OUTPUT "${object}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${obj_dir}"
    COMMAND "${TESSERA_GUEST_CXX}" ${TESSERA_GUEST_CXX_FLAGS}
            -c "${runtime_cxx}" -o "${object}"
    DEPENDS "${runtime_cxx}" ${sdk_headers}
    COMMENT "Compiling wasm32 allocation functions for ${target}"
    VERBATIM)
  list(APPEND objects "${object}")

  set(stubs "${obj_dir}/wasi_stubs.o")
  add_custom_command(
    OUTPUT "${stubs}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${obj_dir}"
    COMMAND "${TESSERA_GUEST_CC}" ${TESSERA_GUEST_C_FLAGS}
            -c "${TESSERA_GUEST_SDK_DIR}/src/wasi_stubs.c" -o "${stubs}"
    DEPENDS "${TESSERA_GUEST_SDK_DIR}/src/wasi_stubs.c"
    COMMENT "Compiling wasm32 WASI stubs for ${target}"
    VERBATIM)

  get_filename_component(output "${GUEST_OUTPUT}" ABSOLUTE
                         BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  get_filename_component(output_dir "${output}" DIRECTORY)
  set(libdir "${TESSERA_WASI_SYSROOT}/lib/wasm32-wasi")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${output_dir}"
    COMMAND "${TESSERA_GUEST_WASM_LD}" --no-entry --strip-all --stack-first
            -z stack-size=${TESSERA_GUEST_STACK_BYTES} -L${libdir}
            ${libdir}/crt1-reactor.o ${objects} "${stubs}"
            -lc++ -lc++abi -lc "${TESSERA_GUEST_BUILTINS}" -o "${output}"
    DEPENDS ${objects} "${stubs}"
    COMMENT "Linking wasm32 guest ${output}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${output}")
  set_target_properties(${target} PROPERTIES TESSERA_GUEST_WASM "${output}")
endfunction()
