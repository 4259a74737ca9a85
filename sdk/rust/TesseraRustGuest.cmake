# Builds tessera guest modules (wasm32) from Rust crates with the Rust guest
# SDK and Debian's toolchain, offline, as sdk/rust/BUILD.md describes (the
# same cargo config `tessera shards build` writes), and runs the SDK's own
# native `cargo test`.
#
#   include(sdk/rust/TesseraRustGuest.cmake)
#   tessera_add_rust_guest(zone_guest
#     OUTPUT ${CMAKE_BINARY_DIR}/guests/zone.wasm
#     CRATE ${CMAKE_SOURCE_DIR}/tests/guests/zone_mini_rust
#     LIB zone_mini_rust)          # the cdylib's file name, without .wasm
#
# When the toolchain (rustc, cargo, the wasm32 standard library, Debian's
# packaged serde crates) is missing, configuring fails and says what to
# install, unless TESSERA_GUEST_REQUIRED is OFF: then every Rust guest
# target fails when it is built, with the same message.
include_guard(GLOBAL)

set(TESSERA_RUST_SDK_DIR "${CMAKE_CURRENT_LIST_DIR}/tessera-shard-guest")
set(TESSERA_CARGO "/usr/bin/cargo" CACHE FILEPATH
    "Debian's cargo (not rustup's shim)")
set(TESSERA_RUSTC "/usr/bin/rustc" CACHE FILEPATH
    "Debian's rustc, with the wasm32-unknown-unknown standard library")
set(TESSERA_CARGO_REGISTRY "/usr/share/cargo/registry" CACHE PATH
    "Debian's packaged crates, the only registry")

set(missing "")
foreach(tool TESSERA_CARGO TESSERA_RUSTC)
  if(NOT EXISTS "${${tool}}")
    list(APPEND missing "${${tool}}")
  endif()
endforeach()
if(EXISTS "${TESSERA_RUSTC}")
  execute_process(COMMAND "${TESSERA_RUSTC}" --print sysroot
                  OUTPUT_VARIABLE rust_sysroot
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_DIRECTORY "${rust_sysroot}/lib/rustlib/wasm32-unknown-unknown")
    list(APPEND missing "the wasm32-unknown-unknown standard library")
  endif()
endif()
foreach(crate serde serde_derive serde_json rmp-serde)
  file(GLOB found "${TESSERA_CARGO_REGISTRY}/${crate}-[0-9]*")
  if(NOT found)
    list(APPEND missing "${TESSERA_CARGO_REGISTRY}/${crate}-*")
  endif()
endforeach()
set(TESSERA_RUST_TOOLCHAIN_FOUND TRUE)
if(missing)
  set(TESSERA_RUST_TOOLCHAIN_FOUND FALSE)
  list(JOIN missing ", " missing)
  string(CONCAT TESSERA_RUST_TOOLCHAIN_MESSAGE
      "no Rust guest toolchain (missing: ${missing}). Install it with "
      "scripts/install-deps, or on Debian: apt-get install rustc cargo "
      "libstd-rust-dev-wasm32 lld-14 librust-serde-dev "
      "librust-serde-derive-dev librust-serde-json-dev librust-rmp-serde-dev")
  if(NOT DEFINED TESSERA_GUEST_REQUIRED OR TESSERA_GUEST_REQUIRED)
    message(FATAL_ERROR "${TESSERA_RUST_TOOLCHAIN_MESSAGE} (or configure with "
                        "-DTESSERA_BUILD_GUESTS=OFF)")
  endif()
  message(WARNING "${TESSERA_RUST_TOOLCHAIN_MESSAGE}; Rust guest targets "
                  "will fail to build")
endif()

# The cargo home every build here uses: our config.toml, never ~/.cargo.
set(TESSERA_CARGO_HOME "${CMAKE_BINARY_DIR}/cargo-home")
file(WRITE "${TESSERA_CARGO_HOME}/config.toml"
"# Written by sdk/rust/TesseraRustGuest.cmake (as src/app/crate_builder.cc).
[source.crates-io]
replace-with = \"debian\"
[source.debian]
directory = \"${TESSERA_CARGO_REGISTRY}\"
[net]
offline = true
[build]
rustc = \"${TESSERA_RUSTC}\"
[term]
color = \"never\"
[patch.crates-io]
tessera-shard-guest = { path = \"${TESSERA_RUST_SDK_DIR}\" }
[profile.release]
opt-level = \"s\"
lto = true
codegen-units = 1
panic = \"abort\"
strip = true
")
set(TESSERA_CARGO_ENV
    env "CARGO_HOME=${TESSERA_CARGO_HOME}" "RUSTC=${TESSERA_RUSTC}")
file(GLOB_RECURSE TESSERA_RUST_SDK_SOURCES CONFIGURE_DEPENDS
     "${TESSERA_RUST_SDK_DIR}/src/*.rs")
list(APPEND TESSERA_RUST_SDK_SOURCES "${TESSERA_RUST_SDK_DIR}/Cargo.toml")

function(tessera_add_rust_guest target)
  cmake_parse_arguments(ARG "" "OUTPUT;CRATE;LIB" "" ${ARGN})
  if(NOT ARG_OUTPUT OR NOT ARG_CRATE OR NOT ARG_LIB)
    message(FATAL_ERROR "tessera_add_rust_guest(${target}): needs OUTPUT, "
                        "CRATE and LIB")
  endif()
  if(NOT TESSERA_RUST_TOOLCHAIN_FOUND)
    add_custom_target(${target} ALL
      COMMAND ${CMAKE_COMMAND} -E echo "${TESSERA_RUST_TOOLCHAIN_MESSAGE}"
      COMMAND ${CMAKE_COMMAND} -E false)
    return()
  endif()
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${ARG_CRATE}/src/*.rs")
  set(target_dir "${CMAKE_BINARY_DIR}/cargo-target")
  add_custom_command(
    OUTPUT "${ARG_OUTPUT}"
    COMMAND ${TESSERA_CARGO_ENV} "${TESSERA_CARGO}" build --release --offline
            --target=wasm32-unknown-unknown
            "--manifest-path=${ARG_CRATE}/Cargo.toml"
            "--target-dir=${target_dir}"
    COMMAND ${CMAKE_COMMAND} -E copy
            "${target_dir}/wasm32-unknown-unknown/release/${ARG_LIB}.wasm"
            "${ARG_OUTPUT}"
    DEPENDS ${sources} "${ARG_CRATE}/Cargo.toml" ${TESSERA_RUST_SDK_SOURCES}
    COMMENT "Building Rust guest ${ARG_LIB}.wasm"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${ARG_OUTPUT}")
endfunction()
