// Error objects and the ABI-boundary helpers every entry point uses.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <new>
#include <string>

#include "plugin_support.hpp"
#include "tessera/plugin.h"
#include "vulkan_symbols.hpp"


namespace tessera::vk {

using plugin_support::errorf;
using plugin_support::human_size;
using plugin_support::make_error;
using plugin_support::strprintf;


// "VK_ERROR_OUT_OF_DEVICE_MEMORY"
const char* vk_result_name(VkResult r);
// VkResult -> the closest TsErrorCode.
TsErrorCode vk_result_code(VkResult r);
// "vulkan: <call> failed: <VK_...>" with the code mapped from `r`.
TsError* vk_error(VkResult r, const std::string& call) noexcept;

}  // namespace tessera::vk

// Returns from the enclosing function when a Vulkan call fails.
#define TS_VK_CALL(expr, what)                                        \
  do {                                                                \
    VkResult r_ = (expr);                                             \
    if (r_ != VK_SUCCESS) return ::tessera::vk::vk_error(r_, (what)); \
  } while (0)

#define TS_VK_ENTRY(Name, SIZE) TS_PLUGIN_ENTRY("vulkan", Name, SIZE)
