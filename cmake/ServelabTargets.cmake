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

# One area of the C++ core (cpp/src/<area>): a static library from an explicit source list.
#   servelab_add_area(<target> SOURCES a.cpp ... [DEPENDS <area>...] [PRIVATE_DEPENDS <target>...])
# DEPENDS: the servelab areas whose headers this area's public headers or sources include (they
# become usable by whoever links this area); PRIVATE_DEPENDS: third-party libraries used only
# inside its .cpp files. List only what the area really includes.
function(servelab_add_area target)
  cmake_parse_arguments(PARSE_ARGV 1 AREA "" "" "SOURCES;DEPENDS;PRIVATE_DEPENDS")
  if(NOT AREA_SOURCES)
    message(FATAL_ERROR "servelab_add_area(${target}): SOURCES is empty")
  endif()
  if(AREA_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "servelab_add_area(${target}): unexpected ${AREA_UNPARSED_ARGUMENTS}")
  endif()
  servelab_add_library(${target} ${AREA_SOURCES})
  target_link_libraries(${target} PUBLIC ${AREA_DEPENDS} PRIVATE ${AREA_PRIVATE_DEPENDS})
endfunction()
