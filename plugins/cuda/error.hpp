// Error objects and the CUresult -> TsErrorCode / message mapping.  The
// mapping and the message format are pure functions (no driver needed), so
// cuda_plugin_test checks them on machines without a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "cuda_symbols.hpp"
#include "plugin_support.hpp"
#include "tessera/plugin.h"

namespace tessera::cuda {

using plugin_support::errorf;
using plugin_support::human_size;
using plugin_support::make_error;
using plugin_support::strprintf;

// "CUDA_ERROR_OUT_OF_MEMORY" from the plugin's own table (used when the
// driver's cuGetErrorName is not at hand); "CUDA_ERROR_<n>" when unknown.
std::string cu_result_builtin_name(CUresult r);
// CUresult -> the closest TsErrorCode.
TsErrorCode cu_result_code(CUresult r);
// What to do about `r`, for the results where the name alone does not say
// (PTX too new for the driver, no code for the GPU, sticky errors...);
// "" for the others.  driver_version: cuDriverGetVersion's (13000);
// cc_major/minor: the device's compute capability (0: unknown).
std::string cu_result_hint(CUresult r, int driver_version, int cc_major, int cc_minor);
// "cuda: <call> failed: <name>[: <description>][ (<hint>)]".
std::string format_cu_error(const std::string& call, const std::string& name,
                            const std::string& description, const std::string& hint);
// "13.0" from 13000.
std::string driver_version_text(int driver_version);

// The error for a failed driver call.  `fn` may be NULL (no driver): the
// name then comes from the builtin table.
TsError* cu_error(const CudaFns* fn, CUresult r, const std::string& call, int driver_version,
                  int cc_major, int cc_minor) noexcept;

}  // namespace tessera::cuda

#define TS_CU_ENTRY(Name, SIZE) TS_PLUGIN_ENTRY("cuda", Name, SIZE)
