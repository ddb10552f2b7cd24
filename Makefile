# The README's commands: `make bench` (the main job) and `make test` (every test).
BUILD     ?= build
JOBS      ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps build test bench bench-kernels exhaustive clean

all: build

# Installs missing Debian packages and ONNX Runtime; remembers where the library is.
deps:
	@mkdir -p $(BUILD)
	@scripts/install-deps.sh > $(BUILD)/ort-lib-dir.txt

build: deps
	@cmake -S . -B $(BUILD) -DACTX_ORT_LIB_DIR="$$(cat $(BUILD)/ort-lib-dir.txt)" $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE exhaustive

# All 2^32 float32 inputs through both paths (long: see README).
exhaustive: build
	cd $(BUILD) && ctest --output-on-failure -L exhaustive

# ORT alone vs ORT + actx, session by session, with the ORT-vs-ORT null control that shows the
# machine's noise: the table, then results/ab.{txt,csv,png}.
# BENCH_ARGS passes options, e.g. make bench BENCH_ARGS=--quick (see actx ab --help).
BENCH_ARGS ?=
bench: build
	$(BUILD)/bin/actx ab --null $(BENCH_ARGS)

# libactx's kernels in ns/element beside memcpy, SLEEF, libm and ORT: results/kernels.{txt,csv}.
bench-kernels: build
	$(BUILD)/bin/actx bench kernels $(BENCH_ARGS)

clean:
	rm -rf $(BUILD)
