# trainsim_set_warnings(TARGET): the warning set every trainsim C++ target is built with. A switch
# over an enum that misses one of its values is an error (-Werror=switch): a new op kind, collective
# or scheme must be handled wherever the enum is switched on, not priced at zero by a default.
function(trainsim_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-unused-parameter -Werror=switch>)
endfunction()
