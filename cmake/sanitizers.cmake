# Sanitizer builds: SERVELAB_SANITIZE=address,undefined or thread (empty: none).
# Applied to every target of this build directory (libraries, tests, extension modules), so a
# sanitizer build always lives in its own build folder (make test-asan / make test-tsan).
set(SERVELAB_SANITIZE "" CACHE STRING "Sanitizers for a checking build: address,undefined or thread (empty: none)")

if(SERVELAB_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "servelab: SERVELAB_SANITIZE needs gcc or clang, got ${CMAKE_CXX_COMPILER_ID}")
  endif()
  string(REPLACE "," ";" _servelab_sanitizers "${SERVELAB_SANITIZE}")
  foreach(_s IN LISTS _servelab_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|thread|leak)$")
      message(FATAL_ERROR "servelab: SERVELAB_SANITIZE: unknown sanitizer '${_s}' (use address, undefined, thread, leak)")
    endif()
  endforeach()
  if("thread" IN_LIST _servelab_sanitizers AND "address" IN_LIST _servelab_sanitizers)
    message(FATAL_ERROR "servelab: SERVELAB_SANITIZE: 'thread' cannot be combined with 'address' (two builds)")
  endif()
  # Frame pointers give complete stacks in reports; UBSan findings abort so that ctest fails on them.
  add_compile_options(-fsanitize=${SERVELAB_SANITIZE} -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${SERVELAB_SANITIZE})
  if("undefined" IN_LIST _servelab_sanitizers)
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  # Link-time optimisation would strip the instrumentation's debug info and slow the build.
  set(CMAKE_INTERPROCEDURAL_OPTIMIZATION OFF)
  message(STATUS "servelab: sanitizers ${SERVELAB_SANITIZE}")
endif()

# Fuzzer builds (SERVELAB_BUILD_FUZZERS): every target gets libFuzzer's coverage instrumentation,
# so the parsers' own code guides the search; only the fuzz_* executables link libFuzzer's main.
if(SERVELAB_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "servelab: SERVELAB_BUILD_FUZZERS needs clang (CXX=clang++), got ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  message(STATUS "servelab: libFuzzer targets on")
endif()
