# Decides whether the CUDA parts are built. Sets TRAINSIM_HAVE_CUDA (ON/OFF).
#   AUTO: build them when nvcc is found (the CUDA toolkit path is searched too).
#   ON:   fail when nvcc, cuBLASLt or NCCL is missing.
#   OFF:  never.
set(TRAINSIM_HAVE_CUDA OFF)
if(NOT TRAINSIM_ENABLE_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "TRAINSIM_ENABLE_CUDA must be AUTO, ON or OFF (got '${TRAINSIM_ENABLE_CUDA}')")
endif()
if(NOT TRAINSIM_ENABLE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      # sm_90 (Hopper) is the target; sm_80 (Ampere) is cheap to add.
      set(CMAKE_CUDA_ARCHITECTURES 80 90 CACHE STRING "CUDA architectures")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    find_path(NCCL_INCLUDE_DIR NAMES nccl.h HINTS $ENV{NCCL_HOME}/include ${CUDAToolkit_INCLUDE_DIRS})
    find_library(NCCL_LIBRARY NAMES nccl HINTS $ENV{NCCL_HOME}/lib ${CUDAToolkit_LIBRARY_DIR})
    if(TARGET CUDA::cublasLt AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(TRAINSIM_HAVE_CUDA ON)
    elseif(TRAINSIM_ENABLE_CUDA STREQUAL "ON")
      message(FATAL_ERROR "TRAINSIM_ENABLE_CUDA=ON but cuBLASLt or NCCL was not found "
                          "(set NCCL_HOME or install them under the CUDA toolkit)")
    endif()
  elseif(TRAINSIM_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TRAINSIM_ENABLE_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "trainsim: CUDA kernels ${TRAINSIM_HAVE_CUDA} (TRAINSIM_ENABLE_CUDA=${TRAINSIM_ENABLE_CUDA})")
