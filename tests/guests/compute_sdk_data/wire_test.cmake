# compute_sdk_data_wire_test (owner: sdk): the C++ compute SDK's data and
# shards functions on the wire. Node runs the compute_sdk_data module with
# a fake tessera_compute_v1 host (wire_test.mjs) and checks each request's
# JSON, replies, last_error codes and the requests the SDK refuses itself.
# Included from src/compute/CMakeLists.txt, where the module is built.
find_program(TESSERA_NODE node)
if(TESSERA_NODE)
  add_test(NAME compute_sdk_data_wire_test
           COMMAND ${TESSERA_NODE}
                   ${CMAKE_SOURCE_DIR}/tests/guests/compute_sdk_data/wire_test.mjs
                   ${CMAKE_BINARY_DIR}/src/compute/guests/compute_sdk_data.wasm)
  set_tests_properties(compute_sdk_data_wire_test PROPERTIES LABELS unit)
endif()
