# The README's commands: `make bench` (the main job) and `make test` (every test).
BUILD     ?= build
JOBS      ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps build test bench exhaustive clean

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

bench: build
	$(BUILD)/bin/actx bench kernels

clean:
	rm -rf $(BUILD)
