# `trainsim run CASE` runs the scenario a validation case names (its scenario file with the case's
# set): the same iteration time, to the last digit, as `trainsim validate CASE` simulates for it, and
# the same simulated value of the case's metric and error against the published value.
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
string(JSON run_value GET "${run}" validation_case simulated)
string(JSON case_value GET "${validate}" cases 0 simulated)
string(JSON run_error GET "${run}" validation_case relative_error)
string(JSON case_error GET "${validate}" cases 0 relative_error)
if(NOT run_value STREQUAL case_value OR NOT run_error STREQUAL case_error)
  message(FATAL_ERROR "run judged the case ${run_value} (error ${run_error}), validate ${case_value} (error "
                      "${case_error})")
endif()
