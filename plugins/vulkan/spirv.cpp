#include "spirv.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>

namespace tessera::vk::spirv {

namespace {

enum : uint32_t {
  kMagic = 0x07230203,
  OpName = 5,
  OpEntryPoint = 15,
  OpExecutionMode = 16,
  OpCapability = 17,
  OpTypeBool = 20,
  OpTypeInt = 21,
  OpTypeFloat = 22,
  OpTypeVector = 23,
  OpTypeMatrix = 24,
  OpTypeArray = 28,
  OpTypeRuntimeArray = 29,
  OpTypeStruct = 30,
  OpTypePointer = 32,
  OpConstant = 43,
  OpConstantComposite = 44,
  OpSpecConstant = 50,
  OpSpecConstantComposite = 51,
  OpVariable = 59,
  OpDecorate = 71,
  OpMemberDecorate = 72,
  OpExecutionModeId = 331,
  OpGroupNonUniformFirst = 333,  // OpGroupNonUniformElect
  OpGroupNonUniformLast = 366,   // OpGroupNonUniformQuadSwap
  // decorations
  DecBlock = 2,
  DecBufferBlock = 3,
  DecArrayStride = 6,
  DecBuiltIn = 11,
  DecBinding = 33,
  DecDescriptorSet = 34,
  DecOffset = 35,
  BuiltInWorkgroupSize = 25,
  // storage classes
  ScUniform = 2,
  ScWorkgroup = 4,
  ScPushConstant = 9,
  ScStorageBuffer = 12,
  // execution modes
  ModeLocalSize = 17,
  ModeLocalSizeId = 38,
};

struct Type {
  uint32_t op = 0;
  std::vector<uint32_t> operands;  // words after the result id
};

}  // namespace

std::string CapabilityName(uint32_t cap) {
  switch (cap) {
    case 0: return "Matrix";
    case 1: return "Shader";
    case 2: return "Geometry";
    case 4: return "Addresses";
    case 5: return "Linkage";
    case 6: return "Kernel";
    case 9: return "Float16";
    case 10: return "Float64";
    case 11: return "Int64";
    case 12: return "Int64Atomics";
    case 22: return "Int16";
    case 39: return "Int8";
    case 61: return "GroupNonUniform";
    case 62: return "GroupNonUniformVote";
    case 63: return "GroupNonUniformArithmetic";
    case 64: return "GroupNonUniformBallot";
    case 65: return "GroupNonUniformShuffle";
    case 66: return "GroupNonUniformShuffleRelative";
    case 67: return "GroupNonUniformClustered";
    case 68: return "GroupNonUniformQuad";
    case 4433: return "StorageBuffer16BitAccess";
    case 4434: return "UniformAndStorageBuffer16BitAccess";
    case 4435: return "StoragePushConstant16";
    case 4448: return "StorageBuffer8BitAccess";
    case 4449: return "UniformAndStorageBuffer8BitAccess";
    case 4450: return "StoragePushConstant8";
    case 4437: return "DeviceGroup";
    case 4464: return "DenormPreserve";
    case 4465: return "DenormFlushToZero";
    case 4466: return "SignedZeroInfNanPreserve";
    case 4467: return "RoundingModeRTE";
    case 4468: return "RoundingModeRTZ";
    case 5055: return "ShaderClockKHR";
    case 5301: return "ShaderNonUniform";
    case 5612: return "AtomicFloat32MinMaxEXT";
    case 5613: return "AtomicFloat64MinMaxEXT";
    case 5616: return "AtomicFloat16MinMaxEXT";
    case 4441: return "VariablePointersStorageBuffer";
    case 4442: return "VariablePointers";
    case 5345: return "VulkanMemoryModel";
    case 5346: return "VulkanMemoryModelDeviceScope";
    case 5347: return "PhysicalStorageBufferAddresses";
    case 6033: return "AtomicFloat32AddEXT";
    case 6034: return "AtomicFloat64AddEXT";
    default: return "capability " + std::to_string(cap);
  }
}

bool Reflect(const uint32_t* w, size_t n, Module* out, std::string* error) {
  if (n < 5 || w[0] != kMagic) {
    *error = (n >= 1 && w[0] == 0x03022307)
                 ? "the SPIR-V is byte-swapped (big-endian words)"
                 : "not a SPIR-V module (the first word is not the magic number 0x07230203)";
    return false;
  }
  Module m;
  m.version = w[1];
  std::unordered_map<uint32_t, Type> types;
  std::unordered_map<uint32_t, uint32_t> constants;  // id -> low word
  std::unordered_map<uint32_t, std::vector<uint32_t>> composites;
  std::unordered_map<uint32_t, uint32_t> set_of, binding_of, array_stride;
  std::unordered_map<uint32_t, bool> block, buffer_block;
  std::unordered_map<uint64_t, uint32_t> member_offset;  // (struct<<32|member)
  std::vector<std::pair<uint32_t, uint32_t>> variables;  // (id, pointer type), sc below
  std::vector<uint32_t> variable_sc;
  uint32_t workgroup_size_id = 0;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> local_size_ids;  // fn, ids
  std::vector<uint32_t> subgroup_result_types;  // result types of OpGroupNonUniform*

  for (size_t i = 5; i < n;) {
    uint32_t wc = w[i] >> 16, op = w[i] & 0xffff;
    if (wc == 0 || i + wc > n) {
      *error = "truncated or malformed SPIR-V: instruction at word " + std::to_string(i) +
               " has word count " + std::to_string(wc);
      return false;
    }
    const uint32_t* a = w + i + 1;  // operands
    uint32_t na = wc - 1;
    switch (op) {
      case OpCapability:
        if (na >= 1) m.capabilities.push_back(a[0]);
        break;
      case OpEntryPoint: {
        if (na < 3) break;
        EntryPoint e;
        e.model = a[0];
        e.function = a[1];
        const char* s = reinterpret_cast<const char*>(a + 2);
        size_t max = (na - 2) * 4, len = 0;
        while (len < max && s[len]) ++len;
        e.name.assign(s, len);
        size_t name_words = len / 4 + 1;
        for (size_t k = 2 + name_words; k < na; ++k) e.interface.push_back(a[k]);
        m.entries.push_back(std::move(e));
        break;
      }
      case OpExecutionMode:
        if (na >= 5 && a[1] == ModeLocalSize) {
          for (EntryPoint& e : m.entries)
            if (e.function == a[0]) {
              e.local[0] = a[2], e.local[1] = a[3], e.local[2] = a[4];
              e.has_local = true;
            }
        }
        break;
      case OpExecutionModeId:
        if (na >= 5 && a[1] == ModeLocalSizeId)
          local_size_ids.push_back({a[0], {a[2], a[3], a[4]}});
        break;
      case OpDecorate:
        if (na >= 2) {
          if (a[1] == DecDescriptorSet && na >= 3) set_of[a[0]] = a[2];
          if (a[1] == DecBinding && na >= 3) binding_of[a[0]] = a[2];
          if (a[1] == DecBlock) block[a[0]] = true;
          if (a[1] == DecBufferBlock) buffer_block[a[0]] = true;
          if (a[1] == DecArrayStride && na >= 3) array_stride[a[0]] = a[2];
          if (a[1] == DecBuiltIn && na >= 3 && a[2] == BuiltInWorkgroupSize)
            workgroup_size_id = a[0];
        }
        break;
      case OpMemberDecorate:
        if (na >= 4 && a[2] == DecOffset)
          member_offset[(static_cast<uint64_t>(a[0]) << 32) | a[1]] = a[3];
        break;
      case OpTypeBool: case OpTypeInt: case OpTypeFloat: case OpTypeVector:
      case OpTypeMatrix: case OpTypeArray: case OpTypeRuntimeArray: case OpTypeStruct:
      case OpTypePointer:
        if (na >= 1) types[a[0]] = Type{op, std::vector<uint32_t>(a + 1, a + na)};
        break;
      case OpConstant: case OpSpecConstant:
        if (na >= 3) constants[a[1]] = a[2];
        break;
      case OpConstantComposite: case OpSpecConstantComposite:
        if (na >= 2) composites[a[1]] = std::vector<uint32_t>(a + 2, a + na);
        break;
      case OpVariable:
        if (na >= 3) {
          variables.push_back({a[1], a[0]});
          variable_sc.push_back(a[2]);
        }
        break;
      default:
        if (op >= OpGroupNonUniformFirst && op <= OpGroupNonUniformLast && na >= 1)
          subgroup_result_types.push_back(a[0]);
        break;
    }
    i += wc;
  }

  // Size of a type in bytes (explicit layout where decorated).  Each type is
  // sized once (memoized): a struct whose members name one type many times,
  // nested, took exponential time (found by fuzz/spirv_fuzzer.cpp); a cycle,
  // which valid SPIR-V cannot have, reads 0.
  std::unordered_map<uint32_t, uint64_t> sized;
  std::function<uint64_t(uint32_t, int)> size_of_type;
  auto size_of = [&](uint32_t id, int depth) -> uint64_t {
    if (auto known = sized.find(id); known != sized.end()) return known->second;
    sized[id] = 0;
    const uint64_t bytes = size_of_type(id, depth);
    sized[id] = bytes;
    return bytes;
  };
  size_of_type = [&](uint32_t id, int depth) -> uint64_t {
    if (depth > 32) return 0;
    auto it = types.find(id);
    if (it == types.end()) return 0;
    const Type& t = it->second;
    switch (t.op) {
      case OpTypeBool: return 4;
      case OpTypeInt: case OpTypeFloat: return t.operands.empty() ? 0 : t.operands[0] / 8;
      case OpTypeVector: case OpTypeMatrix:
        return t.operands.size() < 2 ? 0 : size_of(t.operands[0], depth + 1) * t.operands[1];
      case OpTypeArray: {
        if (t.operands.size() < 2) return 0;
        auto c = constants.find(t.operands[1]);
        uint64_t len = c == constants.end() ? 0 : c->second;
        auto st = array_stride.find(id);
        uint64_t elem = st != array_stride.end() ? st->second : size_of(t.operands[0], depth + 1);
        return elem * len;
      }
      case OpTypeStruct: {
        uint64_t end = 0, packed = 0;
        for (size_t k = 0; k < t.operands.size(); ++k) {
          uint64_t sz = size_of(t.operands[k], depth + 1);
          auto off = member_offset.find((static_cast<uint64_t>(id) << 32) | k);
          uint64_t o = off != member_offset.end() ? off->second : packed;
          end = std::max(end, o + sz);
          packed = o + sz;
        }
        return end;
      }
      default: return 0;
    }
  };

  for (size_t k = 0; k < variables.size(); ++k) {
    uint32_t id = variables[k].first, ptr = variables[k].second, sc = variable_sc[k];
    auto pt = types.find(ptr);
    if (pt == types.end() || pt->second.op != OpTypePointer || pt->second.operands.size() < 2)
      continue;
    uint32_t pointee = pt->second.operands[1];
    if (sc == ScStorageBuffer || sc == ScUniform) {
      if (!binding_of.count(id)) continue;
      Binding b;
      b.set = set_of.count(id) ? set_of[id] : 0;
      b.binding = binding_of[id];
      b.uniform = sc == ScUniform && !buffer_block.count(pointee);
      b.variable = id;
      m.bindings.push_back(b);
    } else if (sc == ScPushConstant) {
      auto st = types.find(pointee);
      if (st == types.end() || st->second.op != OpTypeStruct) continue;
      m.push_variable = id;
      uint64_t packed = 0;
      for (size_t j = 0; j < st->second.operands.size(); ++j) {
        uint32_t sz = static_cast<uint32_t>(size_of(st->second.operands[j], 0));
        auto off = member_offset.find((static_cast<uint64_t>(pointee) << 32) | j);
        uint32_t o = off != member_offset.end() ? off->second : static_cast<uint32_t>(packed);
        m.push_members.push_back({o, sz});
        packed = o + sz;
      }
      m.push_size = static_cast<uint32_t>(size_of(pointee, 0));
    } else if (sc == ScWorkgroup) {
      uint64_t sz = size_of(pointee, 0);
      m.shared_variables.push_back({id, sz});
      m.shared_bytes += sz;
    }
  }
  std::sort(m.bindings.begin(), m.bindings.end(),
            [](const Binding& x, const Binding& y) { return x.binding < y.binding; });

  if (workgroup_size_id) {
    auto c = composites.find(workgroup_size_id);
    if (c != composites.end() && c->second.size() == 3) {
      m.has_workgroup_size_constant = true;
      for (int d = 0; d < 3; ++d) {
        auto v = constants.find(c->second[d]);
        m.workgroup_size[d] = v == constants.end() ? 0 : v->second;
      }
    }
  }
  // Width of a scalar or vector-of-scalar type (0 for bool and others).
  auto scalar_width = [&](uint32_t id) -> uint32_t {
    auto it = types.find(id);
    if (it != types.end() && it->second.op == OpTypeVector && !it->second.operands.empty())
      it = types.find(it->second.operands[0]);
    if (it == types.end() || it->second.operands.empty()) return 0;
    if (it->second.op != OpTypeInt && it->second.op != OpTypeFloat) return 0;
    return it->second.operands[0];
  };
  for (uint32_t t : subgroup_result_types) {
    uint32_t w = scalar_width(t);
    if (w && w != 32) m.subgroup_extended_types = true;
  }
  for (auto& [fn, ids] : local_size_ids)
    for (EntryPoint& e : m.entries)
      if (e.function == fn) {
        for (int d = 0; d < 3; ++d) {
          auto v = constants.find(ids[d]);
          e.local[d] = v == constants.end() ? 0 : v->second;
        }
        e.has_local = true;
      }
  *out = std::move(m);
  return true;
}

}  // namespace tessera::vk::spirv
