# microseconds(OUT SECONDS): OUT = SECONDS (a decimal such as "17.543074946131554") as whole
# microseconds, truncated. CMake has no floating point; its integers are 64-bit.
function(microseconds out seconds)
  string(REGEX REPLACE "^([0-9]+)\\.?([0-9]*)$" "\\1;\\2" parts "${seconds}")
  list(GET parts 0 whole)
  list(GET parts 1 fraction)
  string(SUBSTRING "${fraction}000000" 0 6 fraction)
  math(EXPR us "${whole} * 1000000 + 1${fraction} - 1000000")
  set(${out} ${us} PARENT_SCOPE)
endfunction()
