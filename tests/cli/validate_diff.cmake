# `trainsim diff` of two validation reports of the same cases: nothing moved, exit 0 under
# --exit-code; against a report whose case was simulated slower, the case's simulated value moves.
#   cmake -DEXE=trainsim -DCASES=folder -DOUTPUT_DIR=dir -DWORKDIR=dir -P validate_diff.cmake
execute_process(COMMAND ${EXE} validate ${CASES} --format json -q -j1 WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE report ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "validate of ${CASES} exited ${rc}:\n${err}")
endif()
file(WRITE ${OUTPUT_DIR}/validate-a.json "${report}")
execute_process(COMMAND ${EXE} diff ${OUTPUT_DIR}/validate-a.json ${OUTPUT_DIR}/validate-a.json --exit-code
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE same ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT same MATCHES "# metrics: none moved")
  message(FATAL_ERROR "a validation report against itself: exit ${rc}\n${same}${err}")
endif()
string(JSON id GET "${report}" cases 0 id)
string(JSON simulated GET "${report}" cases 0 simulated)
# CMake has no floating point: the slower value puts a digit before the simulated one.
string(JSON slower SET "${report}" cases 0 simulated "1${simulated}")
file(WRITE ${OUTPUT_DIR}/validate-b.json "${slower}")
execute_process(COMMAND ${EXE} diff ${OUTPUT_DIR}/validate-a.json ${OUTPUT_DIR}/validate-b.json --exit-code
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE moved ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT moved MATCHES "cases[.]${id}[.]simulated")
  message(FATAL_ERROR "a case simulated slower: exit ${rc}, expected 1 and cases.${id}.simulated\n${moved}${err}")
endif()
