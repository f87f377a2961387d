# libFuzzer build (fuzz/, docs/fuzzing.md): -DTESSERA_FUZZ=ON in a build
# folder of its own, configured with clang (scripts/fuzz.sh uses clang-16
# and build-fuzz).  Everything compiled in that tree is instrumented for
# libFuzzer's coverage and checked by AddressSanitizer + UBSan
# (-fsanitize=fuzzer-no-link,address,undefined); only the harnesses link the
# fuzzer's main (-fsanitize=fuzzer).  Libraries from Debian (libMLIR.so,
# libLLVM-16.so) are not instrumented: their bugs are not ours to find.
option(TESSERA_FUZZ "Build the libFuzzer harnesses of fuzz/ (clang only; a build folder of its own)" OFF)
if(NOT TESSERA_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TESSERA_FUZZ=ON needs clang for C and C++ (libFuzzer): configure a separate "
                      "folder with -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 "
                      "(scripts/fuzz.sh does)")
endif()
if(NOT TESSERA_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TESSERA_FUZZ=ON brings its own sanitizers: leave TESSERA_SANITIZE empty")
endif()
# vptr: libMLIR / libLLVM are built without RTTI, so UBSan's dynamic type
# check cannot see their classes' type info. -fno-sanitize-recover: a UBSan
# report is a crash the fuzzer keeps, not a line it prints and goes on.
set(TESSERA_FUZZ_SANITIZERS "address,undefined")
add_compile_options(-fsanitize=fuzzer-no-link,${TESSERA_FUZZ_SANITIZERS} -fno-sanitize=vptr
                    -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
add_link_options(-fsanitize=${TESSERA_FUZZ_SANITIZERS} -fno-sanitize=vptr)
message(STATUS "Tessera fuzz build: -fsanitize=fuzzer-no-link,${TESSERA_FUZZ_SANITIZERS}")

# Shared libraries of an ASan build leave the sanitizer runtime's symbols
# undefined (the executable that loads them carries the runtime), so the
# -Wl,--no-undefined the project puts on its libraries cannot hold here.
# Called from fuzz/CMakeLists.txt once every folder has made its targets.
function(tessera_fuzz_allow_undefined dir)
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${_targets})
    get_target_property(_type ${t} TYPE)
    if(_type STREQUAL "INTERFACE_LIBRARY")
      continue()
    endif()
    get_target_property(_opts ${t} LINK_OPTIONS)
    if(_opts)
      list(REMOVE_ITEM _opts -Wl,--no-undefined -Wl,-z,defs)
      set_target_properties(${t} PROPERTIES LINK_OPTIONS "${_opts}")
    endif()
  endforeach()
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(d ${_subdirs})
    tessera_fuzz_allow_undefined("${d}")
  endforeach()
endfunction()
