// The autotune cache inside libtessera_compiler (autotune.cpp): what
// CompileProgramImage asks before it compiles for a device.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/autotune.hpp"

namespace tessera::program {

std::vector<std::pair<std::string, std::string>> AutotuneKeyFields(const Device& device,
                                                                   const CompileTargetInfo& target,
                                                                   const std::string& target_text,
                                                                   const std::string& program_text,
                                                                   const ProgramCompileOptions& options);
std::string AutotuneCacheFile(const std::vector<std::pair<std::string, std::string>>& fields, std::string* key);
StatusOr<AutotuneResult> ReadAutotuneEntry(const std::string& file, const std::string& key,
                                           const std::vector<std::pair<std::string, std::string>>& fields);
std::string WriteAutotuneEntry(const std::string& file, const std::string& key,
                               const std::vector<std::pair<std::string, std::string>>& fields,
                               const std::string& shapes, const AutotuneResult& result);
// TESSERA_AUTOTUNE is not off.
bool AutotuneReuseEnabled();
// The schedule the autotune cache holds for this compile (*found), when
// options.schedule is empty and reuse is on; a debug line says so.
// *entry_file: the cache file it came from.
std::string TunedSchedule(const Device& device, const CompileTargetInfo& target, const std::string& target_text,
                          const ProgramSource& source, const ProgramCompileOptions& options, bool* found,
                          std::string* entry_file);

}  // namespace tessera::program
