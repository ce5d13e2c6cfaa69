# One entry point for developers and CI. `make demo` and `make test` do all setup first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMPS := .stamps
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_DIR = build/$(shell $(PY) -c 'import sys; print(sys.implementation.cache_tag)')
# A fixed build directory: re-running the editable install recompiles only what changed.
DEV_DEFINES := -Cbuild-dir=build/{cache_tag} -Ccmake.define.SERVELAB_BUILD_TESTS=ON -Ccmake.define.SERVELAB_BUILD_BENCHMARKS=ON

.PHONY: setup build demo test test-cpp test-python bench lint format stubs clean

## setup: Debian packages, the virtual environment and an editable build (idempotent)
setup: build

$(STAMPS)/apt: requirements/apt.txt
	@mkdir -p $(STAMPS)
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	  $$(grep -v '^#' requirements/apt.txt)
	@touch $@

$(STAMPS)/venv: $(STAMPS)/apt requirements/dev.txt requirements/torch.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/torch.txt
	$(PY) -m pip install -q -r requirements/dev.txt
	@touch $@

## build: (re)build the extension modules incrementally into $(BUILD_DIR)
build: $(STAMPS)/venv
	@mkdir -p build
	@# flock: two builds at once (two terminals, helpers, an editor hook) would corrupt the build dir.
	flock build/.build-lock $(PY) -m pip install -q --no-build-isolation --no-deps -e . $(DEV_DEFINES)

## demo: the main job (schedulers compared on the default scenario; plots in servelab-output/)
demo: setup
	$(VENV)/bin/servelab demo

## test: C++ tests (ctest), Python tests, notebooks and benchmark smoke runs
test: setup
	$(MAKE) --no-print-directory test-cpp test-python

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

clean:
	rm -rf build $(STAMPS)
