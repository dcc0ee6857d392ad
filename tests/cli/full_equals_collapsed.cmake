# `trainsim run SCENARIO` and `trainsim run SCENARIO --full` must give the same CSV row: on a
# symmetric scenario the representatives' timeline is every rank's.
foreach(mode collapsed full)
  set(extra)
  if(mode STREQUAL "full")
    set(extra --full)
  endif()
  execute_process(COMMAND ${EXE} run ${SCENARIO} --format csv -q ${extra} WORKING_DIRECTORY ${WORKDIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE ${mode} ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${mode} run of ${SCENARIO} exited ${rc}:\n${err}")
  endif()
endforeach()
if(NOT collapsed STREQUAL full)
  message(FATAL_ERROR "collapsed and full runs of ${SCENARIO} differ:\n${collapsed}\n${full}")
endif()
