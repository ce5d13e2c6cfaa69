# Loads a package's CMake config in a throw-away child configure before the real build touches it.
#
# A package's config file may call find_package(<dep> REQUIRED) on its own (Debian's
# dnnl-config.cmake requires OpenCL, which libdnnl-dev only recommends). Inside our configure that
# is a fatal error that no QUIET can catch, so an optional backend could break the whole build.
# Probing in a child process turns such a failure into a reason string the backend reports as off.
#
#   servelab_probe_package(<out_ok> <out_reason> <package> [PATHS dir...])
# sets <out_ok> to TRUE when `find_package(<package> CONFIG REQUIRED)` succeeds in the child, else
# FALSE with the child's first error line in <out_reason>.
function(servelab_probe_package out_ok out_reason package)
  cmake_parse_arguments(PARSE_ARGV 3 PROBE "" "" "PATHS")
  set(dir "${CMAKE_BINARY_DIR}/servelab-probe/${package}")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}/src")
  set(paths_arg "")
  if(PROBE_PATHS)
    set(paths_arg "PATHS ${PROBE_PATHS} NO_DEFAULT_PATH")
  endif()
  file(WRITE "${dir}/src/CMakeLists.txt"
    "cmake_minimum_required(VERSION 3.26...4.4)\n"
    "project(servelab_probe LANGUAGES CXX)\n"
    "set(CMAKE_POLICY_VERSION_MINIMUM 3.5)\n"
    "find_package(${package} CONFIG REQUIRED ${paths_arg})\n")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S "${dir}/src" -B "${dir}/build" -G "${CMAKE_GENERATOR}"
            "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
            "-DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}" "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    set(${out_ok} TRUE PARENT_SCOPE)
    set(${out_reason} "" PARENT_SCOPE)
    return()
  endif()
  # The first line after "CMake Error" that says something (not the call stack).
  set(reason "its CMake config failed to load")
  string(REPLACE "\n" ";" lines "${err}")
  set(take FALSE)
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line MATCHES "^CMake Error")
      set(take TRUE)
    elseif(take AND NOT line STREQUAL "")
      set(reason "${line}")
      break()
    endif()
  endforeach()
  set(${out_ok} FALSE PARENT_SCOPE)
  set(${out_reason} "${reason}" PARENT_SCOPE)
endfunction()
