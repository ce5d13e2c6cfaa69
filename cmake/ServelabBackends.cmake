# Detects the optional executor backends and sets SERVELAB_HAS_<NAME> (ON/OFF) plus the
# version strings reported by servelab.build_info(). Each is AUTO/ON/OFF (see the root file).
# Detection never fails the configure of an AUTO backend: it is reported off, with the reason.
include(ServelabProbe)

# Fails an ON backend that was not found; explains an AUTO one.
function(servelab_backend_missing name mode why)
  if(mode STREQUAL "ON")
    message(FATAL_ERROR "servelab: SERVELAB_WITH_${name}=ON but ${why}")
  endif()
  message(STATUS "servelab: ${name} backend not compiled: ${why}")
  # build_info() reports the reason (build_config.hpp.in).
  set(SERVELAB_${name}_WHY_OFF "${why}" PARENT_SCOPE)
endfunction()

foreach(backend ONEDNN TORCH CUDA LP)
  set(SERVELAB_${backend}_WHY_OFF "disabled (SERVELAB_WITH_${backend}=OFF)")
endforeach()
foreach(backend ONEDNN TORCH CUDA LP)
  if(NOT SERVELAB_WITH_${backend} MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "servelab: SERVELAB_WITH_${backend} must be AUTO, ON or OFF, got '${SERVELAB_WITH_${backend}}'")
  endif()
endforeach()

# ---- oneDNN (Debian's libdnnl-dev, or any oneDNN CMake package) ------------------------------
set(SERVELAB_HAS_ONEDNN OFF)
set(SERVELAB_ONEDNN_VERSION "")
if(NOT SERVELAB_WITH_ONEDNN STREQUAL "OFF")
  # Probed in a child configure first: a config that fails to load must not fail ours.
  servelab_probe_package(_dnnl_loads _dnnl_why dnnl)
  if(_dnnl_loads)
    find_package(dnnl CONFIG REQUIRED)
    set(SERVELAB_HAS_ONEDNN ON)
    set(SERVELAB_ONEDNN_VERSION "${dnnl_VERSION}")
    message(STATUS "servelab: oneDNN ${dnnl_VERSION} found")
  elseif(_dnnl_why MATCHES "^Could not find a package configuration")
    servelab_backend_missing(ONEDNN ${SERVELAB_WITH_ONEDNN} "no oneDNN CMake package (apt-get install libdnnl-dev)")
  else()
    servelab_backend_missing(ONEDNN ${SERVELAB_WITH_ONEDNN} "oneDNN's CMake package does not load: ${_dnnl_why}")
  endif()
endif()

# ---- LibTorch: the torch wheel installed next to the Python we build for ---------------------
set(SERVELAB_HAS_TORCH OFF)
set(SERVELAB_TORCH_VERSION "")
if(NOT SERVELAB_WITH_TORCH STREQUAL "OFF")
  execute_process(
    COMMAND ${Python_EXECUTABLE} -c "import torch, torch.utils; print(torch.utils.cmake_prefix_path); print(torch.__version__)"
    OUTPUT_VARIABLE _torch_out ERROR_VARIABLE _torch_err RESULT_VARIABLE _torch_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_torch_rc EQUAL 0)
    string(REPLACE "\n" ";" _torch_out "${_torch_out}")
    list(GET _torch_out 0 _torch_prefix)
    list(GET _torch_out 1 SERVELAB_TORCH_VERSION)
    # Torch's CMake files predate CMake 4's policy floor.
    servelab_probe_package(_torch_loads _torch_why Torch PATHS ${_torch_prefix})
    if(_torch_loads)
      # A CUDA build of torch (Caffe2/public/cuda.cmake) enables CUDA, sets CMAKE_CUDA_ARCHITECTURES
      # to OFF and appends -gencode flags for the GPU it sees to CMAKE_CUDA_FLAGS. servelab's own
      # kernels keep servelab's targets (the CUDA section below): saved here, restored after.
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
        set(CMAKE_CUDA_ARCHITECTURES 90)
      endif()
      set(_servelab_cuda_archs "${CMAKE_CUDA_ARCHITECTURES}")
      set(_servelab_cuda_flags "${CMAKE_CUDA_FLAGS}")
      set(CMAKE_POLICY_VERSION_MINIMUM 3.5)
      find_package(Torch CONFIG QUIET PATHS ${_torch_prefix} NO_DEFAULT_PATH)
      unset(CMAKE_POLICY_VERSION_MINIMUM)
      set(CMAKE_CUDA_ARCHITECTURES "${_servelab_cuda_archs}")
      set(CMAKE_CUDA_FLAGS "${_servelab_cuda_flags}")
    else()
      set(Torch_FOUND FALSE)
    endif()
    if(Torch_FOUND)
      set(SERVELAB_HAS_TORCH ON)
      get_filename_component(SERVELAB_TORCH_LIBDIR "${TORCH_LIBRARY}" DIRECTORY)
      message(STATUS "servelab: LibTorch ${SERVELAB_TORCH_VERSION} found in ${_torch_prefix}")
    else()
      servelab_backend_missing(TORCH ${SERVELAB_WITH_TORCH} "torch ${SERVELAB_TORCH_VERSION}'s CMake package under ${_torch_prefix} does not load: ${_torch_why}")
    endif()
  else()
    servelab_backend_missing(TORCH ${SERVELAB_WITH_TORCH}
      "torch is not importable by ${Python_EXECUTABLE} (install torch first and build with --no-build-isolation)")
  endif()
endif()

# ---- CUDA: nvcc + cuBLAS (the toolkit's, or the nvidia-cublas wheel's) -----------------------
set(SERVELAB_HAS_CUDA OFF)
set(SERVELAB_CUDA_VERSION "")
set(SERVELAB_CUBLAS_VERSION "")
if(NOT SERVELAB_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper: sm_90 machine code plus compute_90 PTX for newer GPUs to JIT.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(SERVELAB_CUDA_VERSION "${CUDAToolkit_VERSION}")
    if(TARGET CUDA::cublas)
      set(SERVELAB_CUBLAS_TARGET CUDA::cublas)
    else()
      execute_process(
        COMMAND ${Python_EXECUTABLE} -c "import nvidia.cu${CUDAToolkit_VERSION_MAJOR} as m; print(list(m.__path__)[0])"
        OUTPUT_VARIABLE _cublas_root RESULT_VARIABLE _cublas_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(_cublas_rc EQUAL 0)
        find_library(SERVELAB_CUBLAS_LIBRARY NAMES cublas libcublas.so.${CUDAToolkit_VERSION_MAJOR}
                     PATHS ${_cublas_root}/lib NO_DEFAULT_PATH)
        find_path(SERVELAB_CUBLAS_INCLUDE cublas_v2.h PATHS ${_cublas_root}/include NO_DEFAULT_PATH)
      endif()
      if(SERVELAB_CUBLAS_LIBRARY AND SERVELAB_CUBLAS_INCLUDE)
        add_library(servelab_cublas SHARED IMPORTED)
        set_target_properties(servelab_cublas PROPERTIES
          IMPORTED_LOCATION ${SERVELAB_CUBLAS_LIBRARY}
          INTERFACE_INCLUDE_DIRECTORIES ${SERVELAB_CUBLAS_INCLUDE})
        set(SERVELAB_CUBLAS_TARGET servelab_cublas)
        set(SERVELAB_CUBLAS_PYTHON_RPATH "nvidia/cu${CUDAToolkit_VERSION_MAJOR}/lib")
      endif()
    endif()
    if(SERVELAB_CUBLAS_TARGET)
      set(SERVELAB_HAS_CUDA ON)
      message(STATUS "servelab: CUDA ${CUDAToolkit_VERSION} (${CMAKE_CUDA_COMPILER}), archs ${CMAKE_CUDA_ARCHITECTURES}")
    else()
      servelab_backend_missing(CUDA ${SERVELAB_WITH_CUDA}
        "nvcc ${CUDAToolkit_VERSION} found but not cuBLAS (pip install nvidia-cublas, or the toolkit's libcublas)")
    endif()
  else()
    servelab_backend_missing(CUDA ${SERVELAB_WITH_CUDA} "no CUDA compiler (nvcc) found")
  endif()
endif()

# ---- LP/MILP solver: COIN-OR CBC + CLP through pkg-config (Debian's coinor-libcbc-dev) --------
set(SERVELAB_HAS_LP OFF)
if(NOT SERVELAB_WITH_LP STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(SERVELAB_COINOR QUIET IMPORTED_TARGET cbc clp osi-clp)
  endif()
  if(SERVELAB_COINOR_FOUND)
    set(SERVELAB_HAS_LP ON)
    message(STATUS "servelab: LP solver CBC ${SERVELAB_COINOR_cbc_VERSION} / CLP ${SERVELAB_COINOR_clp_VERSION} found")
  else()
    servelab_backend_missing(LP ${SERVELAB_WITH_LP} "no CBC/CLP found by pkg-config (apt-get install coinor-libcbc-dev)")
  endif()
endif()
