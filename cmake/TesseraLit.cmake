# tessera_add_lit_suite(NAME <ctest name> SOURCE <dir> [LABELS ...]): the
# .mlir files under <dir> as a lit suite (cmake/lit.cfg.py: RUN lines see
# the build's tools and LLVM's FileCheck), run by ctest.
set(TESSERA_LIT ${LLVM_TOOLS_BINARY_DIR}/../build/utils/lit/lit.py)
function(tessera_add_lit_suite)
  cmake_parse_arguments(L "" "NAME;SOURCE" "LABELS" ${ARGN})
  set(TESSERA_LIT_NAME ${L_NAME})
  set(TESSERA_LIT_SOURCE ${L_SOURCE})
  set(TESSERA_LIT_BINARY ${CMAKE_CURRENT_BINARY_DIR}/lit-${L_NAME})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/lit.site.cfg.py.in
                 ${TESSERA_LIT_BINARY}/lit.site.cfg.py @ONLY)
  add_test(NAME ${L_NAME} COMMAND python3 ${TESSERA_LIT} -sv ${TESSERA_LIT_BINARY})
  if(NOT L_LABELS)
    set(L_LABELS ir)
  endif()
  set_tests_properties(${L_NAME} PROPERTIES LABELS "${L_LABELS}" TIMEOUT 300)
endfunction()
