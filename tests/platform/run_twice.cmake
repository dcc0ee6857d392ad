# Runs a command twice and fails unless both runs succeed with byte-identical stdout.
#   cmake -DEXE=program -DARGS="a|b|c" -DWORKDIR=dir -P run_twice.cmake
string(REPLACE "|" ";" args "${ARGS}")
foreach(run 1 2)
  execute_process(COMMAND ${EXE} ${args} WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out${run})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${run} exited with ${rc}")
  endif()
endforeach()
if(NOT out1 STREQUAL out2)
  message(FATAL_ERROR "the two runs differ:\n--- first\n${out1}\n--- second\n${out2}")
endif()
