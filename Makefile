# One entry point for developers and CI. `make demo` and `make test` do all setup first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMPS := .stamps
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_DIR = build/$(shell $(PY) -c 'import sys; print(sys.implementation.cache_tag)')
# A fixed build directory: re-running the editable install recompiles only what changed.
DEV_DEFINES := -Cbuild-dir=build/{cache_tag} -Ccmake.define.SERVELAB_BUILD_TESTS=ON -Ccmake.define.SERVELAB_BUILD_BENCHMARKS=ON

.PHONY: setup build demo notebooks test test-cpp test-python bench lint format stubs clean test-asan test-tsan fuzz-short

## setup: Debian packages, the virtual environment and an editable build (idempotent)
setup: build

$(STAMPS)/apt: requirements/apt.txt
	@mkdir -p $(STAMPS)
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	  $$(grep -v '^#' requirements/apt.txt)
	@touch $@

$(STAMPS)/venv: $(STAMPS)/apt requirements/dev.txt requirements/torch.txt
	@echo "== Python packages into $(VENV): the CPU build of torch and requirements/ (a few minutes the first time)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -r requirements/torch.txt
	$(PY) -m pip install -r requirements/dev.txt
	@touch $@

## build: (re)build the extension modules incrementally into $(BUILD_DIR)
build: $(STAMPS)/venv
	@mkdir -p build
	@# flock: two builds at once (two terminals, an editor hook) would corrupt the build dir.
	@# pip -v shows the build backend's output: CMake's configure, then ninja's [n/N] steps.
	@echo "== Compiling the C++ core into $(BUILD_DIR): about 10 minutes on 2 cores the first time," \
	  "seconds after a small change; ninja's [n/N] lines count the steps"
	flock build/.build-lock $(PY) -m pip install -v --no-build-isolation --no-deps -e . $(DEV_DEFINES)

## demo: the main job (schedulers compared on the default scenario; plots in servelab-output/)
demo: setup
	$(VENV)/bin/servelab demo

## notebooks: open notebooks/ in JupyterLab (each runs in about two minutes; SERVELAB_NOTEBOOK_FULL=1
## for the full sizes). It prints the address to open; JUPYTER_ARGS adds options, e.g. --no-browser.
JUPYTER_ARGS ?=
# Jupyter refuses to run as root unless told: a container or CI machine often is root.
JUPYTER_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
notebooks: setup
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks $(JUPYTER_ROOT) $(JUPYTER_ARGS)

## test: C++ tests (ctest), Python tests, notebooks, benchmark smoke runs and a short fuzz run
test: setup
	$(MAKE) --no-print-directory test-cpp test-python
	@# The C++ parsers under libFuzzer with ASan + UBSan, a few seconds each (longer: make fuzz-short).
	$(MAKE) --no-print-directory fuzz-short FUZZ_SECONDS=5

test-cpp:
	$(VENV)/bin/ctest --test-dir $(BUILD_DIR) --output-on-failure

test-python:
	$(PY) -m pytest

## bench: full benchmarks (C++ Google Benchmark and Python ratios against reference code)
bench: setup
	@for b in $(BUILD_DIR)/benchmarks/cpp/bench_*; do echo "== $$b"; $$b; done
	$(PY) benchmarks/python/run.py
	@for b in benchmarks/python/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lint: setup
	$(VENV)/bin/ruff check python tests benchmarks
	$(VENV)/bin/ruff format --check python tests benchmarks
	clang-format --dry-run --Werror $$(git ls-files 'cpp/*.hpp' 'cpp/*.cpp' 'cpp/*.cu' 'tests/cpp/*.cpp' 'tests/cpp/*.hpp' 'benchmarks/cpp/*.cpp')

format: setup
	$(VENV)/bin/ruff format python tests benchmarks
	$(VENV)/bin/ruff check --fix python tests benchmarks
	clang-format -i $$(git ls-files 'cpp/*.hpp' 'cpp/*.cpp' 'cpp/*.cu' 'tests/cpp/*.cpp' 'tests/cpp/*.hpp' 'benchmarks/cpp/*.cpp')

## stubs: regenerate python/servelab/_core.pyi from the built module (after changing bindings)
stubs: build
	@# servelab.profiles first: it adds to_dict/from_dict/__eq__ to Profile, which the stubs document.
	$(PY) -c 'import sys, servelab.profiles, pybind11_stubgen as g; sys.argv[0] = "pybind11-stubgen"; g.main()' \
	  servelab._core -o build/stubs --numpy-array-remove-parameters
	sed -e 's/^from \. import \([a-z_]*\)$$/\1: typing.Any  # a submodule; use servelab.\1/' \
	  build/stubs/servelab/_core/__init__.pyi > python/servelab/_core.pyi

## test-asan: C++ tests and a Python subset under AddressSanitizer + UBSan (own folder build/asan)
## test-tsan: the threaded C++ tests (serving loop, remote workers, MDP solver team, RAMSIS) under ThreadSanitizer
# Sanitizer builds: plain CMake configures of their own folders, -O1 with debug info, no torch/CUDA.
SAN_CONFIGURE = $(VENV)/bin/cmake -G Ninja -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O1 -g' -DSERVELAB_BUILD_TESTS=ON \
  -DSERVELAB_WITH_TORCH=OFF -DSERVELAB_WITH_CUDA=OFF -DPython_EXECUTABLE=$(abspath $(PY)) \
  -DCMAKE_PREFIX_PATH=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
SAN_ENV = UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$(CURDIR)/tests/sanitizers/ubsan.supp
ASAN_PYTHON_TESTS ?= tests/python/test_bad_input.py tests/python/test_errors.py \
  tests/python/test_fuzz_parsers.py tests/python/test_profile.py tests/python/test_workload.py \
  tests/python/test_lap.py tests/python/test_mdp.py tests/python/test_results.py \
  tests/python/test_properties.py tests/python/test_sim_streaming.py tests/python/test_sim_tie_rule.py \
  tests/python/test_serve_faults.py tests/python/test_executors.py tests/python/test_interrupt.py \
  tests/python/test_ramsis_mdp.py tests/python/test_conformance.py tests/python/test_batch_timeout.py \
  tests/python/test_user_inputs.py tests/python/test_python_executor.py
# Left out: an address-space limit (RLIMIT_AS) means nothing next to ASan's terabytes of shadow,
# and the Ctrl-C trials start fresh interpreters (which load the ordinary build).
ASAN_PYTEST_ARGS ?= -k 'not running_out_of_memory_during_a_run and not random_moments'
SAN_JOBS ?= $(shell nproc)
TSAN_TESTS ?= test_serve test_serve_remote test_solvers test_ramsis test_core
# Wall-clock precision bounds (tens of microseconds, a 2 s deadline) do not hold at a sanitizer's
# speed; the ordinary build checks them. ctest -E regex and gtest negative filter of the same tests.
SAN_TIMING_TESTS = WaitUntilPrecise Serve.FcfsKeepsTheConformanceRules \
  Serve.AgreesWithTheSimulatorOnLatencyPercentiles Serve.FixedServiceTimesAreWaitedPrecisely \
  Serve.AnExceptionFromAHookPropagatesAndJoinsEveryThread
SAN_SPACE := $(subst ,, )
ASAN_CTEST_SKIP ?= $(subst $(SAN_SPACE),|,$(strip $(SAN_TIMING_TESTS)))
TSAN_SKIP ?= $(subst $(SAN_SPACE),:,$(patsubst WaitUntilPrecise,WaitUntilPrecise.*,$(strip $(SAN_TIMING_TESTS))))

test-asan: $(STAMPS)/venv
	$(SAN_CONFIGURE) -B build/asan -DSERVELAB_SANITIZE=address,undefined
	nice -n 10 $(VENV)/bin/cmake --build build/asan
	$(SAN_ENV) ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:suppressions=$(CURDIR)/tests/sanitizers/asan.supp \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp \
	  nice -n 10 $(VENV)/bin/ctest --test-dir build/asan --output-on-failure -j $(SAN_JOBS) -E '$(ASAN_CTEST_SKIP)'
	@# Python is not instrumented: preload libasan (and libstdc++, whose __cxa_throw ASan must find
	@# at start-up), and leave the interpreter's own leaks unreported.
	@# pytest captures stderr, so the reports go to files, printed when the run fails.
	rm -f build/asan/python-report.*
	$(SAN_ENV):log_path=$(CURDIR)/build/asan/python-report \
	  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:log_path=$(CURDIR)/build/asan/python-report:suppressions=$(CURDIR)/tests/sanitizers/asan.supp \
	  LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libstdc++.so)" PYTHONMALLOC=malloc \
	  nice -n 10 $(PY) tests/sanitizers/pytest_on_build.py build/asan $(ASAN_PYTHON_TESTS) -q -p no:cacheprovider \
	  $(ASAN_PYTEST_ARGS) || { cat build/asan/python-report.* 2>/dev/null; exit 1; }

test-tsan: $(STAMPS)/venv
	$(SAN_CONFIGURE) -B build/tsan -DSERVELAB_SANITIZE=thread
	nice -n 10 $(VENV)/bin/cmake --build build/tsan --target $(TSAN_TESTS)
	@for t in $(TSAN_TESTS); do echo "== $$t (ThreadSanitizer)"; \
	  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/sanitizers/tsan.supp \
	  nice -n 10 build/tsan/tests/cpp/$$t --gtest_brief=1 --gtest_filter=-$(TSAN_SKIP) || exit 1; done

## fuzz-short: each libFuzzer target of tests/fuzz for FUZZ_SECONDS (default 20) from seed corpora (clang; build/fuzz)
FUZZ_SECONDS ?= 20
FUZZ_TARGETS ?= spec ramsis_policy traces

fuzz-short: $(STAMPS)/venv
	CXX=clang++ CC=clang $(SAN_CONFIGURE) -B build/fuzz -DSERVELAB_SANITIZE=address,undefined \
	  -DSERVELAB_BUILD_FUZZERS=ON -DSERVELAB_BUILD_TESTS=OFF -DSERVELAB_WITH_ONEDNN=OFF -DSERVELAB_WITH_LP=OFF
	nice -n 10 $(VENV)/bin/cmake --build build/fuzz --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	$(PY) tests/fuzz/make_seeds.py build/fuzz/seeds
	@# The first folder collects what the run finds (kept between runs); crashes land in build/fuzz/.
	@for t in $(FUZZ_TARGETS); do echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; mkdir -p build/fuzz/corpus/$$t; \
	  $(SAN_ENV) nice -n 10 build/fuzz/tests/fuzz/fuzz_$$t build/fuzz/corpus/$$t tests/fuzz/corpus/$$t \
	    build/fuzz/seeds/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=build/fuzz/crash-$$t- || exit 1; done

clean:
	rm -rf build $(STAMPS)
