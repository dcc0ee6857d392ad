# Pruning mirrored traffic changes nothing: `trainsim run SCENARIO --all-traffic` (mirrors that cannot
# share a link with what is played are left out) and the same with --links (every mirror played, for
# the whole link load) give the same iteration time, the first playing fewer mirrors. SETS: --set
# overrides separated by ';'.
include(${CMAKE_CURRENT_LIST_DIR}/microseconds.cmake)
set(args)
foreach(s IN LISTS SETS)
  list(APPEND args --set ${s})
endforeach()
foreach(mode pruned every)
  set(extra)
  if(mode STREQUAL "every")
    set(extra --links 1)
  endif()
  execute_process(COMMAND ${EXE} run ${SCENARIO} --all-traffic --format json -q ${extra} ${args}
                  WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${mode} run of ${SCENARIO} exited ${rc}:\n${err}")
  endif()
  string(JSON ${mode}_time GET "${out}" iteration_time_s)
  string(JSON ${mode}_played GET "${out}" simulation mirrored_communications played)
  string(JSON ${mode}_found GET "${out}" simulation mirrored_communications found)
endforeach()
# The same to the microsecond (the two runs advance SimGrid's clock in different steps, so rounding
# may differ in the last digits).
foreach(mode pruned every)
  microseconds(${mode}_us "${${mode}_time}")
endforeach()
math(EXPR off "${pruned_us} - ${every_us}")
if(off GREATER 1 OR off LESS -1)
  message(FATAL_ERROR "pruning moved the iteration: ${pruned_time} s with ${pruned_played} of ${pruned_found} "
                      "mirrors played, ${every_time} s with ${every_played}")
endif()
if(NOT pruned_played LESS every_played OR NOT every_played EQUAL every_found)
  message(FATAL_ERROR "expected fewer mirrors played when pruned: ${pruned_played} against ${every_played} "
                      "of ${every_found}")
endif()
message(STATUS "${pruned_time} s with ${pruned_played} and with ${every_played} of ${every_found} mirrors")
