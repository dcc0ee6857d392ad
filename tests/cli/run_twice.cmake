# Runs `trainsim SUBCOMMAND SCENARIO --format json` (SUBCOMMAND: run unless given; cluster for a
# cluster file) twice and fails unless both runs succeed (exit 0 or 4, infeasible plans being results
# too) with byte-identical output.
if(NOT SUBCOMMAND)
  set(SUBCOMMAND run)
endif()
foreach(i 1 2)
  execute_process(COMMAND ${EXE} ${SUBCOMMAND} ${SCENARIO} --format json -q WORKING_DIRECTORY ${WORKDIR}
                  RESULT_VARIABLE rc${i} OUTPUT_VARIABLE out${i} ERROR_VARIABLE err${i})
  if(NOT rc${i} EQUAL 0 AND NOT rc${i} EQUAL 4)
    message(FATAL_ERROR "run ${i} of ${SCENARIO} exited ${rc${i}}:\n${err${i}}")
  endif()
endforeach()
if(NOT out1 STREQUAL out2)
  message(FATAL_ERROR "two runs of ${SCENARIO} differ")
endif()
if(NOT out1 MATCHES "\"iteration_time_s\"")
  message(FATAL_ERROR "no iteration_time_s in the output of ${SCENARIO}:\n${out1}")
endif()
