# Runs a command and compares its exit code, stdout and (optionally) stderr with expectations.
#   cmake -DEXE=program -DARGS="a|b|c" -DEXPECTED_RC=0 [-DEXPECTED_STDOUT=file] [-DEXPECTED_STDERR=file]
#         [-DSTDOUT_CONTAINS=regex] [-DSTDERR_CONTAINS=regex] -DWORKDIR=dir -P compare_output.cmake
# Golden files are refreshed with tools/update-golden.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${EXE} ${args} WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(failed FALSE)
if(NOT rc STREQUAL EXPECTED_RC)
  message(SEND_ERROR "exit code ${rc}, expected ${EXPECTED_RC}\nstdout:\n${out}\nstderr:\n${err}")
  set(failed TRUE)
endif()
foreach(stream STDOUT STDERR)
  if(DEFINED EXPECTED_${stream})
    file(READ ${EXPECTED_${stream}} expected)
    if(stream STREQUAL STDOUT)
      set(actual "${out}")
    else()
      set(actual "${err}")
    endif()
    if(NOT actual STREQUAL expected)
      message(SEND_ERROR "${stream} differs from ${EXPECTED_${stream}} (run tools/update-golden if the change is "
                         "intended)\n--- expected\n${expected}\n--- actual\n${actual}")
      set(failed TRUE)
    endif()
  endif()
endforeach()
if(DEFINED STDOUT_CONTAINS AND NOT out MATCHES "${STDOUT_CONTAINS}")
  message(SEND_ERROR "stdout does not match '${STDOUT_CONTAINS}':\n${out}")
endif()
if(DEFINED STDERR_CONTAINS AND NOT err MATCHES "${STDERR_CONTAINS}")
  message(SEND_ERROR "stderr does not match '${STDERR_CONTAINS}':\n${err}")
endif()
