# `trainsim compare SCENARIO --trace T --iterations 1` must simulate the step `trainsim run SCENARIO`
# reports: the same iteration time to the last digit.
#   cmake -DEXE=trainsim -DSCENARIO=file -DTRACE=file -DWORKDIR=dir -P compare_matches_run.cmake
execute_process(COMMAND ${EXE} run ${SCENARIO} --format json -q WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE run ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run of ${SCENARIO} exited ${rc}:\n${err}")
endif()
execute_process(COMMAND ${EXE} compare ${SCENARIO} --trace ${TRACE} --iterations 1 --format json -q
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE compare ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compare of ${SCENARIO} exited ${rc}:\n${err}")
endif()
string(JSON run_time GET "${run}" iteration_time_s)
string(JSON step_time GET "${compare}" step_time_s simulated)
if(NOT run_time STREQUAL step_time)
  message(FATAL_ERROR "compare simulated a step of ${step_time} s, run an iteration of ${run_time} s")
endif()
