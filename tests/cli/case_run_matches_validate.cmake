# `trainsim run CASE` runs the scenario a validation case names (its scenario file with the case's
# set): the same iteration time, to the last digit, as `trainsim validate CASE` simulates for it.
#   cmake -DEXE=trainsim -DCASE=file -DWORKDIR=dir -P case_run_matches_validate.cmake
execute_process(COMMAND ${EXE} run ${CASE} --format json -q WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE run ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run of ${CASE} exited ${rc}:\n${err}")
endif()
execute_process(COMMAND ${EXE} validate ${CASE} --format json -q WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE validate ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "validate of ${CASE} exited ${rc}:\n${err}")
endif()
string(JSON run_time GET "${run}" iteration_time_s)
string(JSON case_time GET "${validate}" cases 0 iteration_time_s)
if(NOT run_time STREQUAL case_time)
  message(FATAL_ERROR "validate simulated an iteration of ${case_time} s for the case, run one of ${run_time} s")
endif()
