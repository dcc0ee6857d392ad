# TRAINSIM_BUILD_FUZZERS: the libFuzzer targets of tests/fuzz/ (input decoders, unit parser,
# nccl-tests importer). libFuzzer ships with clang, so this needs clang (e.g.
# -DCMAKE_CXX_COMPILER=clang++-14). Everything is then built with coverage instrumentation,
# AddressSanitizer and UndefinedBehaviorSanitizer, every undefined-behaviour report being fatal, so
# the unit tests of the same build directory also run sanitized.
if(TRAINSIM_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TRAINSIM_BUILD_FUZZERS needs clang (libFuzzer comes with it); configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  if(NOT TRAINSIM_BUILD_TESTS)
    message(FATAL_ERROR "TRAINSIM_BUILD_FUZZERS needs TRAINSIM_BUILD_TESTS (the fuzzers live in tests/fuzz/)")
  endif()
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()
