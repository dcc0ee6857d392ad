# The trainsim program does not link cuBLASLt, whose initialisers would cost every command about
# 0.75 s and 210 MB at start-up; the CUDA backend's module does (calibrate/cuda_module.h).
#   cmake -DEXE=path/to/trainsim -DMODULE=path/to/libtrainsim_calibrate_cuda.so -P cuda_module_links.cmake
foreach(binary EXE MODULE)
  execute_process(COMMAND readelf -d ${${binary}} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${${binary}} failed (exit ${rc})")
  endif()
  set(${binary}_dynamic "${dynamic}")
endforeach()
if(EXE_dynamic MATCHES "NEEDED[^\n]*libcublasLt")
  message(FATAL_ERROR "${EXE} links cuBLASLt; only the CUDA backend's module should:\n${EXE_dynamic}")
endif()
if(NOT MODULE_dynamic MATCHES "NEEDED[^\n]*libcublasLt")
  message(FATAL_ERROR "${MODULE} does not link cuBLASLt, so the check of ${EXE} proves nothing:\n${MODULE_dynamic}")
endif()
