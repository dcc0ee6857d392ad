# `trainsim run --trace` writes Chrome trace JSON that parses, names a process per node and a track
# per GPU stream (receives on their own), has complete events named by op, pass, layer and micro-batch
# (collectives by kind, group and size), send->receive flows, HBM and power counters; --trace-ranks
# narrows it and --no-trace-counters drops the counters.
file(REMOVE ${TRACE})
execute_process(COMMAND ${EXE} run scenarios/03-gpt3-175b-64xa100.yaml --network ideal --trace ${TRACE}
                        --trace-ranks 0,8 -q
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "trainsim run --trace exited ${rc}:\n${err}")
endif()
file(READ ${TRACE} trace)
string(JSON events ERROR_VARIABLE json_error LENGTH "${trace}" traceEvents)
if(json_error)
  message(FATAL_ERROR "the trace is not valid JSON: ${json_error}")
endif()
foreach(needle "\"process_name\"" "\"thread_name\"" "\"ph\":\"X\"" "\"ph\":\"s\"" "\"ph\":\"f\"" "\"ph\":\"C\""
               "rank 0 compute" "rank 8 p2p" "rank 8 p2p recv" "\"power rank 8\"" "tp_comm all_gather tp 48MiB L0 mb0"
               "qkv gemm fwd L0 mb0" "\"phase\":\"bwd\"" "\"group\":\"tp\"")
  string(FIND "${trace}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the trace has no ${needle}")
  endif()
endforeach()
string(FIND "${trace}" "rank 16 " at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "--trace-ranks 0,8 let rank 16 into the trace")
endif()

execute_process(COMMAND ${EXE} run scenarios/03-gpt3-175b-64xa100.yaml --network ideal --trace ${TRACE}
                        --trace-ranks 0 --no-trace-counters -q
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "trainsim run --trace --no-trace-counters exited ${rc}:\n${err}")
endif()
file(READ ${TRACE} trace)
string(FIND "${trace}" "\"ph\":\"C\"" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "--no-trace-counters left a counter in the trace")
endif()
