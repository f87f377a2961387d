# tessera_run_test(NAME <test> BACKEND <cpu|vulkan> PROGRAM <file.mlir>
#                  [ARGS <tessera-run arguments>...] [TIMEOUT <seconds>])
#
# A ctest that runs a Tessera IR program with tessera-run on one backend and
# relies on its verification against the reference in the same run: a
# "FAIL" or a missing reference fails the test, exit code 77 (no usable
# device of that backend) is a SKIP. Compiled kernels are cached in the
# build tree.
function(tessera_run_test)
  cmake_parse_arguments(T "" "NAME;BACKEND;PROGRAM;TIMEOUT" "ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(_labels example ir)
  if(NOT T_BACKEND STREQUAL "cpu")
    list(APPEND _labels ${T_BACKEND})
  endif()
  add_test(NAME ${T_NAME} COMMAND tessera-run ${T_PROGRAM} ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "TESSERA_BACKEND=${T_BACKEND};TESSERA_CACHE_DIR=${CMAKE_BINARY_DIR}/tessera-cache"
    SKIP_RETURN_CODE 77
    FAIL_REGULAR_EXPRESSION "verify: no reference|: FAIL|reference: "
    LABELS "${_labels}"
    TIMEOUT ${T_TIMEOUT})
endfunction()

# tessera_run_diagnostic_test(NAME <test> BACKEND <cpu|vulkan> PROGRAM <file.mlir>
#                             EXPECT <regex> [ARGS <tessera-run arguments>...])
#
# A bad program on one backend: the output must match EXPECT (the
# diagnostic with its file:line:col) and tessera-run must exit 1 (not 0, not
# a runtime error, not a signal). "vulkan backend unavailable" is a SKIP.
function(tessera_run_diagnostic_test)
  cmake_parse_arguments(T "" "NAME;BACKEND;PROGRAM;EXPECT" "ARGS" ${ARGN})
  add_test(NAME ${T_NAME}
    COMMAND sh -c "\"$0\" \"$@\"; echo \"tessera-run exit code $?\"" $<TARGET_FILE:tessera-run>
            ${T_PROGRAM} ${T_ARGS})
  set(_labels example ir)
  if(NOT T_BACKEND STREQUAL "cpu")
    list(APPEND _labels ${T_BACKEND})
  endif()
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "TESSERA_BACKEND=${T_BACKEND}"
    PASS_REGULAR_EXPRESSION "${T_EXPECT}"
    FAIL_REGULAR_EXPRESSION "exit code (0|2|3|1[0-9]|[4-689])"
    SKIP_REGULAR_EXPRESSION "vulkan backend unavailable"
    LABELS "${_labels}" TIMEOUT 60)
endfunction()
