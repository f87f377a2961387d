// A small SPIR-V reader: what the runtime needs to know about a module
// before it creates pipelines (entry points, local size, descriptor
// bindings, the push-constant block, shared memory, capabilities).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::vk::spirv {

struct Binding {
  uint32_t set = 0;
  uint32_t binding = 0;
  bool uniform = false;  // a uniform buffer (Block in Uniform); else storage
  uint32_t variable = 0;
};

struct EntryPoint {
  std::string name;
  uint32_t model = 0;  // 5 = GLCompute
  uint32_t function = 0;
  uint32_t local[3] = {0, 0, 0};
  bool has_local = false;
  std::vector<uint32_t> interface;  // SPIR-V 1.4+: every global it uses
};

struct Module {
  uint32_t version = 0;  // 0x00010300 for 1.3
  std::vector<uint32_t> capabilities;
  std::vector<EntryPoint> entries;
  std::vector<Binding> bindings;
  // Push-constant block members in declaration order: (offset, size).
  std::vector<std::pair<uint32_t, uint32_t>> push_members;
  uint32_t push_size = 0;
  uint32_t push_variable = 0;
  uint64_t shared_bytes = 0;  // all Workgroup variables
  std::vector<std::pair<uint32_t, uint64_t>> shared_variables;  // (id, bytes)
  // A subgroup operation (OpGroupNonUniform*) on an 8/16/64-bit value:
  // no capability says so, yet the device needs shaderSubgroupExtendedTypes.
  bool subgroup_extended_types = false;
  // A constant decorated BuiltIn WorkgroupSize overrides LocalSize.
  bool has_workgroup_size_constant = false;
  uint32_t workgroup_size[3] = {0, 0, 0};
};

// Parses `words`; on failure returns false with a message in `error`.
bool Reflect(const uint32_t* words, size_t count, Module* out, std::string* error);

// "Int64", "GroupNonUniformArithmetic", ... or "capability N".
std::string CapabilityName(uint32_t cap);

}  // namespace tessera::vk::spirv
