#include "spirv.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>

namespace tessera::level_zero::spirv {

namespace {

// Opcodes and enumerants the check reads (SPIR-V 1.6 unified spec).
constexpr uint32_t kOpEntryPoint = 15, kOpExecutionMode = 16, kOpTypeInt = 21,
                   kOpTypeFloat = 22, kOpTypeVector = 23, kOpTypePointer = 32,
                   kOpFunction = 54, kOpFunctionParameter = 55, kOpFunctionEnd = 56;
constexpr uint32_t kModelGLCompute = 5, kModelKernel = 6;
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kStorageCrossWorkgroup = 5;
constexpr uint32_t kMaxVersion = 0x00010600;  // SPIR-V 1.6

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// A literal string inside words [at, end): "" and false when it has no NUL.
bool literal_string(const uint32_t* w, size_t at, size_t end, std::string* out, size_t* words) {
  const char* p = reinterpret_cast<const char*>(w + at);
  const size_t max = (end - at) * 4;
  const void* nul = std::memchr(p, '\0', max);
  if (!nul) return false;
  const size_t len = static_cast<size_t>(static_cast<const char*>(nul) - p);
  out->assign(p, len);
  *words = len / 4 + 1;
  return true;
}

struct Type {
  uint32_t op = 0;
  uint32_t a = 0, b = 0;  // int/float: width; vector: component, count; pointer: class, type
};

}  // namespace

std::string CheckVersion(uint32_t module_version, uint32_t device_supported) {
  if (device_supported == 0) return "";
  const uint32_t major = module_version >> 16, minor = (module_version >> 8) & 0xffu;
  const uint32_t dev_major = device_supported >> 16, dev_minor = device_supported & 0xffffu;
  if (major < dev_major || (major == dev_major && minor <= dev_minor)) return "";
  return "the module is SPIR-V " + std::to_string(major) + "." + std::to_string(minor) +
         " but the device takes SPIR-V up to " + std::to_string(dev_major) + "." + std::to_string(dev_minor) +
         " (spirvVersionSupported); kernels with subgroup operations need 1.3: compile without them, "
         "or run on a newer driver";
}

std::string CheckModule(const void* data, size_t size, Module* out) {
  *out = Module{};
  if (!data || size == 0) return "the SPIR-V module is empty";
  if (size > kMaxImageBytes)
    return "the SPIR-V module is " + std::to_string(size) + " bytes; at most " +
           std::to_string(kMaxImageBytes) + " are accepted";
  if (size % 4 != 0)
    return "a SPIR-V module is a sequence of 32-bit words, but this one is " +
           std::to_string(size) + " bytes (not a multiple of 4: truncated?)";
  if (size < 20)
    return "a SPIR-V module of " + std::to_string(size) +
           " bytes is truncated (the header alone is 5 words)";
  const size_t n = size / 4;
  std::vector<uint32_t> words(n);  // aligned copy: `data` may be unaligned
  std::memcpy(words.data(), data, size);
  const uint32_t* w = words.data();
  if (w[0] != kMagic) {
    if (w[0] == 0x03022307u)
      return "the SPIR-V module is big-endian; Level Zero takes little-endian words";
    return "not a SPIR-V module (magic " + hex(w[0]) + ", expected 0x07230203)";
  }
  const uint32_t version = w[1];
  if ((version & 0xff0000ffu) != 0 || (version >> 16) != 1 || version > kMaxVersion)
    return "SPIR-V version word " + hex(version) + " is not a SPIR-V 1.0 to 1.6 version";
  const uint32_t bound = w[3];
  if (bound == 0) return "the SPIR-V header's id bound is 0";
  out->version = version;

  std::unordered_map<uint32_t, Type> types;
  std::unordered_map<uint32_t, std::vector<uint32_t>> fn_params;  // function -> param types
  std::vector<std::pair<uint32_t, Kernel>> entries;   // (function id, kernel)
  std::vector<std::pair<uint32_t, std::array<uint32_t, 3>>> local_sizes;
  uint32_t current_fn = 0;
  auto bad_id = [&](uint32_t id) { return id == 0 || id >= bound; };

  for (size_t i = 5; i < n;) {
    const uint32_t wc = w[i] >> 16, op = w[i] & 0xffffu;
    if (wc == 0)
      return "SPIR-V instruction at word " + std::to_string(i) + " (opcode " +
             std::to_string(op) + ") has a word count of 0";
    if (wc > n - i)
      return "SPIR-V instruction at word " + std::to_string(i) + " (opcode " +
             std::to_string(op) + ", " + std::to_string(wc) +
             " words) runs past the end of the " + std::to_string(n) + "-word module (truncated?)";
    const size_t end = i + wc;
    auto need = [&](uint32_t words_needed) { return wc >= words_needed; };
    std::string malformed = "malformed SPIR-V instruction at word " + std::to_string(i) +
                            " (opcode " + std::to_string(op) + ")";
    switch (op) {
      case kOpEntryPoint: {
        if (!need(4)) return malformed;
        const uint32_t model = w[i + 1], fn = w[i + 2];
        if (bad_id(fn)) return malformed + ": id out of bounds";
        std::string name;
        size_t used = 0;
        if (!literal_string(w, i + 3, end, &name, &used))
          return malformed + ": the entry point's name has no terminating NUL";
        if (model == kModelKernel) {
          if (name.empty()) return malformed + ": a Kernel entry point without a name";
          Kernel k;
          k.name = name;
          entries.emplace_back(fn, std::move(k));
        } else if (model == kModelGLCompute) {
          ++out->glcompute_entries;
        }
        break;
      }
      case kOpExecutionMode:
        if (!need(3)) return malformed;
        if (w[i + 2] == kModeLocalSize) {
          if (!need(6)) return malformed + ": LocalSize needs three sizes";
          local_sizes.push_back({w[i + 1], {w[i + 3], w[i + 4], w[i + 5]}});
        }
        break;
      case kOpTypeInt:
      case kOpTypeFloat:
        if (!need(3) || bad_id(w[i + 1])) return malformed;
        types[w[i + 1]] = Type{op, w[i + 2], 0};
        break;
      case kOpTypeVector:
      case kOpTypePointer:
        if (!need(4) || bad_id(w[i + 1])) return malformed;
        types[w[i + 1]] = Type{op, w[i + 2], w[i + 3]};
        break;
      case kOpFunction:
        if (!need(5) || bad_id(w[i + 2])) return malformed;
        current_fn = w[i + 2];
        fn_params[current_fn];
        break;
      case kOpFunctionParameter:
        if (!need(3) || current_fn == 0) return malformed;
        fn_params[current_fn].push_back(w[i + 1]);
        break;
      case kOpFunctionEnd:
        current_fn = 0;
        break;
      default:
        break;
    }
    i = end;
  }
  if (entries.empty()) {
    if (out->glcompute_entries)
      return "the module's entry points are GLCompute shaders (Vulkan SPIR-V); Level Zero "
             "runs OpenCL kernels: compile for the Kernel execution model (Addresses, "
             "Kernel capabilities, Physical64 OpenCL memory model)";
    return "the SPIR-V module has no Kernel entry point";
  }
  auto param_of = [&](uint32_t type_id) {
    Param p;
    auto it = types.find(type_id);
    if (it == types.end()) return p;
    const Type& t = it->second;
    if (t.op == kOpTypePointer) {
      if (t.a == kStorageCrossWorkgroup) {
        p.kind = Param::kBuffer;
        p.bytes = 8;
      }
    } else if (t.op == kOpTypeInt || t.op == kOpTypeFloat) {
      if (t.a % 8 == 0 && t.a >= 8 && t.a <= 64) {
        p.kind = Param::kScalar;
        p.bytes = t.a / 8;
      }
    } else if (t.op == kOpTypeVector) {
      auto c = types.find(t.a);
      if (c != types.end() && (c->second.op == kOpTypeInt || c->second.op == kOpTypeFloat) &&
          c->second.a % 8 == 0 && c->second.a <= 64 && t.b >= 2 && t.b <= 16) {
        // OpenCL: a 3-component vector takes the space of 4.
        const uint32_t lanes = t.b == 3 ? 4 : t.b;
        p.kind = Param::kScalar;
        p.bytes = c->second.a / 8 * lanes;
      }
    }
    return p;
  };
  for (auto& [fn, k] : entries) {
    for (const Kernel& other : out->kernels)
      if (other.name == k.name)
        return "the SPIR-V module has two Kernel entry points named '" + k.name + "'";
    for (auto& [lfn, sz] : local_sizes)
      if (lfn == fn) std::memcpy(k.local_size, sz.data(), sizeof k.local_size);
    auto ps = fn_params.find(fn);
    if (ps == fn_params.end())
      return "Kernel entry point '" + k.name + "' names function %" + std::to_string(fn) +
             ", which the module does not define";
    k.params_known = true;
    for (uint32_t type_id : ps->second) {
      Param p = param_of(type_id);
      if (p.kind == Param::kOther) k.params_known = false;
      k.params.push_back(p);
    }
    out->kernels.push_back(std::move(k));
  }
  return "";
}

}  // namespace tessera::level_zero::spirv
