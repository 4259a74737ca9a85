# tessera developer entry points. `make dev` and `make test` work on a fresh
# Debian bookworm machine: they install what they need first.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
CMAKE_GEN  := -G Ninja
TESSERA    := $(BUILD)/src/cli/tessera
# Unit tests run again under ASan+UBSan (label `unit`).
ASAN_TARGETS ?= common_test wasm_test guest_test shard_test store_test net_proto_test net_test \
                app_test server_test sdk_codec_test sdk_interest_test \
                interest_test replication_test replication_fixtures \
                loadtest_test net_client_test net_session_test sdk_rewind_test \
                rust_guest_test sdk_talk_test zones_test compute_compile_test
ASAN_TARGETS += compute_policies_test compute_engine_test compute_store_test \
                compute_instance_test compute_templates_test compute_rust_test \
                compute_server_test
ASAN_TARGETS += data_test
ASAN_TARGETS += data_service_test
ASAN_TARGETS += compute_data_test
ASAN_TARGETS += data_store_test
ASAN_TARGETS += call_runner_test
ASAN_TARGETS += entity_writer_test
ASAN_TARGETS += stop_functions_test
ASAN_TARGETS += compute_shards_test
ASAN_TARGETS += shard_calls_test
ASAN_TARGETS += join_routes_test
ASAN_TARGETS += realm_patch_test
ASAN_TARGETS += realm_rules_test
ASAN_TARGETS += realm_store_test
ASAN_TARGETS += pg_realm_store_test
ASAN_TARGETS += pg_store_test
ASAN_TARGETS += pg_compute_store_test
ASAN_TARGETS += pg_data_store_test
ASAN_TARGETS += realm_engine_test
ASAN_TARGETS += realm_host_test
ASAN_TARGETS += wt_wire_test
ASAN_TARGETS += cluster_test
ASAN_TARGETS += pg_machine_store_test
# The fuzz run: FUZZ_SECS in total, shared equally by the targets.
FUZZ_SECS  ?= 75
FUZZ_TARGETS := module_loader frame ticket replication_changes \
                entities_payload view_abi talk_abi compute_sources
FUZZ_TARGETS += compute_contract
FUZZ_TARGETS += data_schema
FUZZ_TARGETS += compute_data_ops
FUZZ_TARGETS += shard_calls
FUZZ_TARGETS += realm_patch
FUZZ_TARGETS += realm_wire
FUZZ_TARGETS += input_log
FUZZ_TARGETS += webtransport

.PHONY: all deps build build-quick integration-test test unit-test asan-test fuzz-test dev run-arena bench spec clean format \
        ts-deps ts-build ts-test compare compare-realm bench-realm-serving bench-realm-serving-run \
        bench-reload bench-reload-run cluster-bench cluster-dev

all: build

deps:
	scripts/install-deps

# ts-deps first: the configure step finds clients/ts's tsc for the
# compute_policies_ts_compiles check of the generated TypeScript.
build: deps ts-deps
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

# The quick tier: every integration, spec and bench-smoke test in the
# optimised build, the TypeScript SDK's tests, every unit test in the
# sanitizer build (ASan+UBSan; there only, not twice), and a short fuzz run.
test: integration-test ts-test asan-test fuzz-test
	@echo "make test: all tiers passed"

# What the quick tier needs of the optimised build: all but the unit-test
# executables (the CMake target quick_tier).
build-quick: deps ts-deps
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTESSERA_UNIT_TEST_TARGETS="$(strip $(ASAN_TARGETS))"
	cmake --build $(BUILD) -j $(JOBS) --target quick_tier

integration-test: build-quick
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE unit

# Every test of the optimised build, the unit tests included.
unit-test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The TypeScript client SDK (clients/ts, @tessera/client). `npm ci` runs when
# node_modules is missing or older than package-lock.json. ts-build emits
# clients/ts/dist (ES modules, .d.ts, and the browser bundle
# dist/tessera-client.js that the dev server serves at /sdk/). ts-test runs
# the unit tests, the Node client against the real server binary, and the
# arena, zone, range and zones pages in headless Chromium (screenshots in
# $(BUILD)/artifacts/).
TS_DIR := clients/ts

ts-deps:
	@if [ ! -f $(TS_DIR)/node_modules/.package-lock.json ] || \
	    [ $(TS_DIR)/package-lock.json -nt $(TS_DIR)/node_modules/.package-lock.json ]; then \
	  echo "npm ci in $(TS_DIR)"; cd $(TS_DIR) && npm ci --no-audit --no-fund; \
	fi

ts-build: ts-deps
	cd $(TS_DIR) && npm run --silent build

ts-test: build-quick ts-build
	cd $(TS_DIR) && TESSERA_BIN=$(abspath $(TESSERA)) \
	  ARTIFACTS_DIR=$(abspath $(BUILD))/artifacts npx vitest run

# Line tables only (-g1): the reports' stacks keep file:line, and the
# compiles take a third less time than with full debug info.
asan-test: deps
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
	  -DTESSERA_SANITIZE=ON -DTESSERA_SANITIZE_ONLY_UNIT=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(ASAN_TARGETS)
	ASAN_OPTIONS=detect_leaks=1:handle_segv=0:allow_user_segv_handler=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -L unit

fuzz-test: deps
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) $(CMAKE_GEN) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_FUZZ=ON -DTESSERA_FUZZ_ONLY=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS) \
	  --target $(addsuffix _fuzz,$(FUZZ_TARGETS))
	set -e; for f in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$f; \
	  $(FUZZ_BUILD)/fuzz/$${f}_fuzz \
	    -max_total_time=$$(( $(FUZZ_SECS) / $(words $(FUZZ_TARGETS)) )) \
	    -rss_limit_mb=4096 -timeout=10 \
	    $(FUZZ_BUILD)/corpus/$$f fuzz/corpus/$$f; \
	done

# The whole WebAssembly core spec conformance run (the quick subset,
# ctest spec_quick, is part of unit-test). Scripts come from the directory
# in TESSERA_WASM_SPEC_DIR (default ../shared/wasm-spec); without them it
# fails and says what to set. Compiled modules are cached in
# $(BUILD)/spec-cache.
spec: build
	$(BUILD)/tests/spec/spec_runner

# Builds tessera and the TypeScript SDK, and serves the example arena on
# http://127.0.0.1:4321 (WebSocket, admin API, metrics, its demo page at /)
# with the zone, range, zones and lobby examples beside it (pages at /zone/,
# /range/, /zones/ and /lobby/)
# and the SDK bundle at /sdk/; state in examples/arena/.tessera/ (SQLite).
# Stop with Ctrl-C: shards are saved.
# `make dev PORT=8080` when 4321 is taken.
dev: build ts-build
	$(TESSERA) dev examples/arena examples/zone examples/range examples/zones \
	  examples/lobby --mount /sdk=$(TS_DIR)/dist \
	  $(if $(PORT),--port $(PORT))

# Runs the arena for 3 s of game time from the command line, printing each
# tick's snapshot (no server).
run-arena: build
	$(TESSERA) run examples/arena --kind arena \
	  --params '{"width":800,"height":500}' --ticks 60 \
	  --inputs examples/arena/demo-inputs.jsonl

bench: build ts-build
	$(TESSERA) shards build examples/arena
	$(BUILD)/bench/runtime_bench
	$(BUILD)/bench/interest/interest_bench
	$(BUILD)/bench/replication/replication_bench
	$(BUILD)/bench/replication/history_bench
	$(BUILD)/bench/net/net_bench
	$(BUILD)/bench/talk/messages_bench
	$(BUILD)/bench/talk/transfer_bench
	$(BUILD)/bench/compute/compute_bench --json $(BUILD)/bench/compute/compute_bench.json
	$(BUILD)/bench/calls/calls_bench --json $(BUILD)/bench/calls/calls_bench.json
	$(BUILD)/bench/replay/replay_bench
	$(BUILD)/bench/realm/realm_bench --json $(BUILD)/bench/realm/realm_bench.json
	$(MAKE) --no-print-directory bench-realm-serving-run
	$(MAKE) --no-print-directory bench-reload-run

# Hot reload (bench/reload/run.mjs): source saved -> the running arena shard
# on the quick build, beside the optimised build that follows (the
# baseline); writes bench/reload/RESULTS.md. Part of `make bench`.
# A throwaway PostgreSQL and three machines on it, for trying the cluster
# by hand (README "Running several machines").
cluster-dev: build
	TESSERA=$(abspath $(TESSERA)) scripts/cluster-dev

# Failover between machines on one PostgreSQL (docs/cluster.md): kill -9
# against SIGTERM, ROUNDS=20 each.
cluster-bench: build
	cmake --build $(BUILD) -j $(JOBS) --target cluster_failover_bench
	$(BUILD)/bench/cluster_failover_bench

bench-reload: build
	$(MAKE) --no-print-directory bench-reload-run

bench-reload-run:
	TESSERA_BIN=$(abspath $(TESSERA)) node bench/reload/run.mjs $(RELOAD_ARGS)

# Realm serving (docs/realms.md "Benchmarks (serving)"): commit-to-client
# latency with 100 clients on one realm beside a plain `ws` relay, and a
# reconnect by replay of 100 versions beside a hydrate of 1 MB; writes
# bench/realm/RESULTS-serving.md and results-serving.json (about a minute).
# Part of `make bench`; alone: `make bench-realm-serving` (QUICK=1: 10
# clients, 3 s). REALM_SERVING_ARGS passes more options
# (`node bench/realm/serving/run.mjs --help`).
REALM_SERVING_ARGS ?=
ifneq ($(QUICK),)
REALM_SERVING_ARGS += --quick
endif

bench-realm-serving: build ts-build
	$(MAKE) --no-print-directory bench-realm-serving-run

bench-realm-serving-run:
	TESSERA_BIN=$(abspath $(TESSERA)) node bench/realm/serving/run.mjs $(REALM_SERVING_ARGS)

# Side by side with Colyseus (bench/compare/README.md): the arena on tessera
# and as a Colyseus room under the same bots, N = 100, 500 and 1000, one
# server after the other; writes bench/compare/RESULTS.md and results.json
# (about 5 minutes; not part of `make test`). COMPARE_ARGS passes harness
# options (`node bench/compare/harness/run.mjs --help`; `--quick` is the
# 5-bot smoke run). The default raises the priority of the servers and bots
# above the machine's other work (needs root or CAP_SYS_NICE).
COMPARE_DIR  := bench/compare
COMPARE_ARGS ?= --priority -10

compare: build ts-build
	@for d in colyseus harness; do \
	  if [ ! -f $(COMPARE_DIR)/$$d/node_modules/.package-lock.json ] || \
	      [ $(COMPARE_DIR)/$$d/package-lock.json -nt $(COMPARE_DIR)/$$d/node_modules/.package-lock.json ]; then \
	    echo "npm ci in $(COMPARE_DIR)/$$d"; (cd $(COMPARE_DIR)/$$d && npm ci --no-audit --no-fund) || exit 1; \
	  fi; \
	done
	TESSERA_BIN=$(abspath $(TESSERA)) node $(COMPARE_DIR)/harness/run.mjs $(COMPARE_ARGS)

# A shared document with presence on a tessera realm and on Hocuspocus (Yjs)
# under the same bots (bench/compare/README.md, "Realms: tessera vs
# Hocuspocus"): 100 clients writing their own subtree 5 times a second for
# 20 s, then a reconnect after 100 missed updates; writes
# bench/compare/realm/RESULTS.md and results.json (about 2 minutes; not part
# of `make test`). QUICK=1: the 5-client, 3 s smoke run (exit 1 on a failed
# check). COMPARE_REALM_ARGS passes more options (`node
# bench/compare/realm/run.mjs --help`).
COMPARE_REALM_DIR  := $(COMPARE_DIR)/realm
COMPARE_REALM_ARGS ?= --priority -10
ifneq ($(QUICK),)
COMPARE_REALM_ARGS += --quick
endif

compare-realm: build ts-build
	@if [ ! -f $(COMPARE_REALM_DIR)/node_modules/.package-lock.json ] || \
	    [ $(COMPARE_REALM_DIR)/package-lock.json -nt $(COMPARE_REALM_DIR)/node_modules/.package-lock.json ]; then \
	  echo "npm ci in $(COMPARE_REALM_DIR)"; (cd $(COMPARE_REALM_DIR) && npm ci --no-audit --no-fund) || exit 1; \
	fi
	TESSERA_BIN=$(abspath $(TESSERA)) node $(COMPARE_REALM_DIR)/run.mjs $(COMPARE_REALM_ARGS)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

