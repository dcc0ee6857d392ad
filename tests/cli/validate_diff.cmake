# `trainsim diff` of two validation reports of the same cases: nothing moved, exit 0 under
# --exit-code; against a report whose case was simulated slower, the case's simulated value moves.
#   cmake -DEXE=trainsim -DCASES=folder -DOUTPUT_DIR=dir -DWORKDIR=dir -P validate_diff.cmake
execute_process(COMMAND ${EXE} validate ${CASES} --format json -q -j1 WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE report ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "validate of ${CASES} exited ${rc}:\n${err}")
endif()
file(WRITE ${OUTPUT_DIR}/validate-a.json "${report}")

# expect_diff(B RC PATTERN WHAT): `trainsim diff validate-a.json B --exit-code` exits RC and prints
# PATTERN; otherwise fails naming WHAT.
function(expect_diff b expected pattern what)
  execute_process(COMMAND ${EXE} diff ${OUTPUT_DIR}/validate-a.json ${b} --exit-code
                  WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expected OR NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: exit ${rc}, expected ${expected} and '${pattern}'\n${out}${err}")
  endif()
endfunction()

expect_diff(${OUTPUT_DIR}/validate-a.json 0 "# metrics: none moved" "a validation report against itself")
string(JSON id GET "${report}" cases 0 id)
string(JSON simulated GET "${report}" cases 0 simulated)
# CMake has no floating point: the slower value puts a digit before the simulated one.
string(JSON slower SET "${report}" cases 0 simulated "1${simulated}")
file(WRITE ${OUTPUT_DIR}/validate-b.json "${slower}")
expect_diff(${OUTPUT_DIR}/validate-b.json 1 "cases[.]${id}[.]simulated" "a case simulated slower")
