#!/usr/bin/env bash
# Build servelab's CUDA and LibTorch backends on a GPU machine and run everything that needs a GPU:
# the C++ CUDA test (plain and under compute-sanitizer when it is there), the Python GPU tests and
# the GPU benchmark. For a node that has python3 with torch (CUDA build), pybind11, numpy, pandas,
# pytest, CMake, ninja and nvcc, but none of Debian's -dev packages and no network: stage the
# header-only dependencies first, on a machine that has them, and bring the folder along:
#
#     python scripts/stage_offline_deps.py build/offline-deps      # where the -dev packages are
#     scripts/gpu_check.sh [LOG_DIR [STEP...]]                      # on the GPU node
#
# With STEPs (machine_info googletest configure build cuda_test cuda_memcheck python_tests
# gpu_bench), only those run, in the order above: `googletest configure build` leaves the modules
# built for other work (e.g. servelab sim-vs-real on the GPU).
#
# Every step runs even when an earlier one fails; each writes LOG_DIR/<step>.log, a summary goes to
# stdout, and the exit status is 1 if any step failed. The extension modules are built with plain
# CMake and placed next to python/servelab (PYTHONPATH=python), so nothing is installed.
set -u
cd "$(dirname "$0")/.."
deps=${SERVELAB_OFFLINE_DEPS:-$PWD/build/offline-deps}
logs=${1:-build/gpu-check}
only=("${@:2}")
py=${PYTHON:-python3}
build=build/gpu
jobs=$(nproc)
mkdir -p "$logs"
failed=()

step() {  # step NAME COMMAND...: run, log, time, remember failures
  local name=$1 start rc
  shift
  start=$(date +%s%N)
  "$@" >"$logs/$name.log" 2>&1
  rc=$?
  printf '%-14s rc=%-3s %6d ms\n' "$name" "$rc" $((($(date +%s%N) - start) / 1000000))
  if [ "$rc" -ne 0 ]; then
    failed+=("$name")
    tail -n 30 "$logs/$name.log" | sed 's/^/    /'
  fi
  return "$rc"
}

machine_info() {
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  nvcc --version | tail -n 2
  "${CXX:-g++}" --version | head -n 1
  cmake --version | head -n 1
  "$py" -c 'import sys, torch, numpy; print(sys.version.split()[0], "torch", torch.__version__,
    "cuda", torch.version.cuda, "gpu", torch.cuda.get_device_name(0), "numpy", numpy.__version__)'
}

googletest() {
  cmake -S "$deps/src/googletest" -B build/gpu-gtest -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$PWD/build/gpu-gtest/prefix" &&
    cmake --build build/gpu-gtest -j "$jobs" && cmake --install build/gpu-gtest
}

configure() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$deps;$PWD/build/gpu-gtest/prefix" \
    -DPython_EXECUTABLE="$(command -v "$py")" -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)" \
    -DSERVELAB_WITH_CUDA=ON -DSERVELAB_WITH_TORCH=ON -DSERVELAB_BUILD_TESTS=ON \
    ${SERVELAB_CMAKE_ARGS:-}
}

build_modules() {
  local targets=(_core _torch _cuda test_exec_cuda)
  # _lp needs COIN-OR, absent on such a node unless installed: build it only if configured.
  grep -q '^build _lp' "$build/build.ninja" 2>/dev/null && targets+=(_lp)
  cmake --build "$build" -j "$jobs" --target "${targets[@]}" &&
    find "$build" -name '_*.cpython-*.so' -exec cp -f {} python/servelab/ \; &&
    ls -l python/servelab/*.so
}

cuda_test() { "$build/tests/cpp/test_exec_cuda"; }

cuda_memcheck() {
  if ! command -v compute-sanitizer >/dev/null; then
    echo "compute-sanitizer is not on the PATH: skipped"
    return 0
  fi
  compute-sanitizer --tool memcheck --error-exitcode 3 "$build/tests/cpp/test_exec_cuda"
}

# Runs a Python command; if it dies of a signal, runs it again under a debugger for the stack.
python_or_backtrace() {
  PYTHONPATH=python "$py" -X faulthandler "$@"
  local rc=$?
  if [ "$rc" -ge 128 ] && command -v cuda-gdb >/dev/null; then
    echo "== died with status $rc; the native stack:"
    PYTHONPATH=python cuda-gdb -batch -ex run -ex bt -ex 'info sharedlibrary' --args "$py" "$@" 2>&1 |
      grep -v '^\[New Thread\|^\[Thread'
  fi
  return "$rc"
}

# One process per file, so that a crash in one leaves the others' results.
python_tests() {
  local rc=0 f
  for f in test_cuda test_gpu_serving test_recsys test_torchscript_executor test_torch_backend \
    test_build_info test_recsys_executor; do
    echo "== tests/python/$f.py"
    # The two "developer build" checks expect oneDNN and CBC, which such a node lacks.
    python_or_backtrace -m pytest -q -rs -p no:cacheprovider "tests/python/$f.py" \
      --deselect tests/python/test_build_info.py::test_developer_build_has_the_lp_solver \
      --deselect tests/python/test_build_info.py::test_developer_build_compiles_every_backend || rc=1
  done
  return "$rc"
}

# The recommendation models apart from the rest, so that one case failing leaves the other's figures.
gpu_bench() {
  python_or_backtrace benchmarks/python/bench_gpu.py --cases cuda_mlp torchscript serving \
    --json "$logs/bench_gpu.json"
  local rc=$?
  python_or_backtrace benchmarks/python/bench_gpu.py --cases recsys gather --json "$logs/bench_gpu_recsys.json" &&
    return "$rc"
}

wanted() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }
for name in "${only[@]}"; do
  wanted_steps=" machine_info googletest configure build cuda_test cuda_memcheck python_tests gpu_bench "
  [[ $wanted_steps == *" $name "* ]] || { echo "unknown step: $name (one of:$wanted_steps)"; exit 2; }
done

wanted machine_info && step machine_info machine_info
wanted googletest && step googletest googletest
wanted configure && step configure configure
wanted build && step build build_modules
wanted cuda_test && step cuda_test cuda_test
wanted cuda_memcheck && step cuda_memcheck cuda_memcheck
wanted python_tests && step python_tests python_tests
wanted gpu_bench && step gpu_bench gpu_bench && tail -n 60 "$logs/gpu_bench.log"
if [ ${#failed[@]} -ne 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
echo "all GPU checks passed"
