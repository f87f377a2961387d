# Checks one conformance code object (kernels/hip/basic.hip) after it is
# built: an AMDGPU code object for ARCH holding every kernel of the suite.
#   cmake -DREADELF=... -DFILE=... -DARCH=... -P check_hsaco.cmake
execute_process(COMMAND "${READELF}" --notes "${FILE}" OUTPUT_VARIABLE notes RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FILE}: llvm-readelf --notes failed")
endif()
if(NOT notes MATCHES "amdhsa.target: +amdgcn-amd-amdhsa--${ARCH}")
  message(FATAL_ERROR "${FILE}: not a code object for ${ARCH}")
endif()
foreach(kernel fill_u32 mul_add_u32 saxpy copy_u32 count gate delayed_store handshake log_stream)
  if(NOT notes MATCHES "\\.name: +${kernel}\n")
    message(FATAL_ERROR "${FILE}: no kernel ${kernel}")
  endif()
endforeach()
