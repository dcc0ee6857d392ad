# Runs one scenario twice with the contention-free network model and fails unless the JSON reports
# and the Chrome traces of both runs are byte-identical. The report holds no wall-clock field (its
# provenance is versions, input hashes and the command line), so nothing is dropped before comparing.
# -DEXE=trainsim -DSCENARIO=scenarios/x.yaml -DWORKDIR=<source root> -DOUT=<scratch directory>
file(MAKE_DIRECTORY ${OUT})
foreach(i 1 2)
  # --trace-ranks 0 keeps the trace of the largest scenarios small; every scenario has a rank 0.
  execute_process(COMMAND ${EXE} run ${SCENARIO} --network ideal --format json -q --trace ${OUT}/trace.json
                          --trace-ranks 0
                  WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE report${i} ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 AND NOT rc EQUAL 4)
    message(FATAL_ERROR "run ${i} of ${SCENARIO} exited ${rc}:\n${err}")
  endif()
  file(RENAME ${OUT}/trace.json ${OUT}/trace${i}.json)
endforeach()
if(NOT report1 STREQUAL report2)
  file(WRITE ${OUT}/report1.json "${report1}")
  file(WRITE ${OUT}/report2.json "${report2}")
  message(FATAL_ERROR "two runs of ${SCENARIO} gave different reports (${OUT}/report1.json, report2.json)")
endif()
file(SHA256 ${OUT}/trace1.json trace1)
file(SHA256 ${OUT}/trace2.json trace2)
if(NOT trace1 STREQUAL trace2)
  message(FATAL_ERROR "two runs of ${SCENARIO} wrote different traces (${OUT}/trace1.json, trace2.json)")
endif()
string(JSON events ERROR_VARIABLE json_error LENGTH "${report1}" comm)
if(json_error OR NOT report1 MATCHES "\"iteration_time_s\"")
  message(FATAL_ERROR "the report of ${SCENARIO} is not a complete run report:\n${report1}")
endif()
file(REMOVE_RECURSE ${OUT})
