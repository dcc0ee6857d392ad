# trainsim_set_warnings(TARGET): the warning set every trainsim C++ target is built with.
function(trainsim_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-unused-parameter>)
endfunction()
