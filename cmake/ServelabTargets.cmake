# Settings every servelab C++ target shares, applied per target (global flags stay untouched).

find_program(SERVELAB_CCACHE ccache)
if(SERVELAB_CCACHE)
  message(STATUS "servelab: compiling through ${SERVELAB_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER ${SERVELAB_CCACHE})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${SERVELAB_CCACHE})
endif()

# C++20, hidden symbols and position-independent code. Hidden visibility matters: torch bundles
# its own oneDNN, and our inline oneDNN/C++ symbols must never bind to torch's copies (or back).
function(servelab_configure_target target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES
    CXX_EXTENSIONS OFF
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>)
endfunction()

# One static library per area, linked into the extension modules.
function(servelab_add_library target)
  add_library(${target} STATIC ${ARGN})
  add_library(servelab::${target} ALIAS ${target})
  servelab_configure_target(${target})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/cpp/include ${PROJECT_BINARY_DIR}/generated)
endfunction()
