// Error objects and the ABI-boundary helpers every entry point uses.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <new>
#include <string>

#include "plugin_support.hpp"
#include "tessera/plugin.h"


namespace tessera::cpu {

using plugin_support::errorf;
using plugin_support::human_size;
using plugin_support::make_error;
using plugin_support::strprintf;


}  // namespace tessera::cpu

#define TS_CPU_ENTRY(Name, SIZE) TS_PLUGIN_ENTRY("cpu", Name, SIZE)
