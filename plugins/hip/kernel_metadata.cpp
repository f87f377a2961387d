#include "kernel_metadata.hpp"

#include <cstring>
#include <memory>
#include <utility>

#include "plugin_support.hpp"

namespace tessera::hip {

namespace {

constexpr uint32_t kShtNote = 7;
constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr int kMaxDepth = 32;

template <class T>
T rd(const unsigned char* p, size_t at) {
  T v;
  std::memcpy(&v, p + at, sizeof v);
  return v;
}

// A decoded MessagePack value (the subset code objects use; binary data and
// extensions are skipped as opaque).
struct Value {
  enum Kind { kNil, kBool, kInt, kUint, kFloat, kString, kArray, kMap, kOpaque } kind = kNil;
  int64_t i = 0;
  uint64_t u = 0;
  std::string s;
  std::vector<Value> items;                    // array
  std::vector<std::pair<Value, Value>> pairs;  // map

  const Value* get(const char* key) const {
    for (const auto& [k, v] : pairs)
      if (k.kind == kString && k.s == key) return &v;
    return nullptr;
  }
  bool number(uint64_t* out) const {
    if (kind == kUint) return *out = u, true;
    if (kind == kInt && i >= 0) return *out = static_cast<uint64_t>(i), true;
    return false;
  }
};

// Big-endian reader over [p, end); every read checks what is left.
class Reader {
 public:
  Reader(const unsigned char* p, size_t n) : p_(p), end_(p + n) {}
  std::string error;

  bool value(Value* v, int depth) {
    if (depth > kMaxDepth) return fail("nested deeper than 32 levels");
    uint8_t t;
    if (!byte(&t)) return false;
    if (t <= 0x7f) return v->kind = Value::kUint, v->u = t, true;
    if (t >= 0xe0) return v->kind = Value::kInt, v->i = static_cast<int8_t>(t), true;
    if ((t & 0xf0) == 0x80) return map(v, t & 0x0f, depth);
    if ((t & 0xf0) == 0x90) return array(v, t & 0x0f, depth);
    if ((t & 0xe0) == 0xa0) return str(v, t & 0x1f);
    uint64_t n = 0;
    switch (t) {
      case 0xc0: v->kind = Value::kNil; return true;
      case 0xc2: case 0xc3: v->kind = Value::kBool; v->u = t == 0xc3; return true;
      case 0xc4: case 0xc5: case 0xc6: case 0xd9: case 0xda: case 0xdb: {
        const int w = (t == 0xc4 || t == 0xd9) ? 1 : (t == 0xc5 || t == 0xda) ? 2 : 4;
        if (!be(w, &n)) return false;
        if (t >= 0xd9) return str(v, n);
        v->kind = Value::kOpaque;
        return skip(n);
      }
      case 0xc7: case 0xc8: case 0xc9: {  // ext 8/16/32: size, type, data
        if (!be(t == 0xc7 ? 1 : t == 0xc8 ? 2 : 4, &n) || !skip(1)) return false;
        v->kind = Value::kOpaque;
        return skip(n);
      }
      case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:  // fixext 1..16
        v->kind = Value::kOpaque;
        return skip(1 + (size_t{1} << (t - 0xd4)));
      case 0xca: v->kind = Value::kFloat; return skip(4);
      case 0xcb: v->kind = Value::kFloat; return skip(8);
      case 0xcc: case 0xcd: case 0xce: case 0xcf:
        v->kind = Value::kUint;
        return be(1 << (t - 0xcc), &v->u);
      case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        const int w = 1 << (t - 0xd0);
        if (!be(w, &n)) return false;
        v->kind = Value::kInt;
        v->i = w == 8 ? static_cast<int64_t>(n) : static_cast<int64_t>(n << (64 - 8 * w)) >> (64 - 8 * w);
        return true;
      }
      case 0xdc: case 0xdd: return be(t == 0xdc ? 2 : 4, &n) && array(v, n, depth);
      case 0xde: case 0xdf: return be(t == 0xde ? 2 : 4, &n) && map(v, n, depth);
      default: return fail("unknown MessagePack type byte 0x" + hex(t));
    }
  }

 private:
  const unsigned char* p_;
  const unsigned char* end_;

  size_t left() const { return static_cast<size_t>(end_ - p_); }
  bool fail(const std::string& why) {
    if (error.empty()) error = why;
    return false;
  }
  static std::string hex(uint8_t b) {
    static const char d[] = "0123456789abcdef";
    return {d[b >> 4], d[b & 15]};
  }
  bool byte(uint8_t* b) {
    if (!left()) return fail("ends inside a value");
    *b = *p_++;
    return true;
  }
  bool skip(uint64_t n) {
    if (n > left()) return fail("a value claims " + std::to_string(n) + " bytes; " + std::to_string(left()) + " are left");
    p_ += n;
    return true;
  }
  bool be(int width, uint64_t* out) {
    if (static_cast<size_t>(width) > left()) return fail("ends inside a number");
    uint64_t v = 0;
    for (int k = 0; k < width; ++k) v = v << 8 | *p_++;
    *out = v;
    return true;
  }
  bool str(Value* v, uint64_t n) {
    if (n > left()) return fail("a string claims " + std::to_string(n) + " bytes; " + std::to_string(left()) + " are left");
    v->kind = Value::kString;
    v->s.assign(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }
  // Each element takes at least one byte: a count above what is left is
  // malformed. Elements are appended as they are read, never allocated
  // from a count, so the values held never outnumber the bytes read.
  bool array(Value* v, uint64_t n, int depth) {
    if (n > left()) return fail("an array claims " + std::to_string(n) + " elements; " + std::to_string(left()) + " bytes are left");
    v->kind = Value::kArray;
    for (uint64_t k = 0; k < n; ++k) {
      v->items.emplace_back();
      if (!value(&v->items.back(), depth + 1)) return false;
    }
    return true;
  }
  bool map(Value* v, uint64_t n, int depth) {
    if (n > left() / 2) return fail("a map claims " + std::to_string(n) + " entries; " + std::to_string(left()) + " bytes are left");
    v->kind = Value::kMap;
    for (uint64_t k = 0; k < n; ++k) {
      v->pairs.emplace_back();
      if (!value(&v->pairs.back().first, depth + 1) || !value(&v->pairs.back().second, depth + 1)) return false;
    }
    return true;
  }
};

}  // namespace

std::string decode_kernel_metadata(const unsigned char* msgpack, size_t size, std::vector<KernelMetadata>* out) {
  out->clear();
  Reader r(msgpack, size);
  Value root;
  if (!r.value(&root, 0)) return "AMDGPU metadata: " + r.error;
  if (root.kind != Value::kMap) return "AMDGPU metadata: not a map";
  const Value* kernels = root.get("amdhsa.kernels");
  if (!kernels) return "";  // no kernels recorded
  if (kernels->kind != Value::kArray) return "AMDGPU metadata: amdhsa.kernels is not a list";
  for (const Value& k : kernels->items) {
    if (k.kind != Value::kMap) return "AMDGPU metadata: a kernel entry is not a map";
    KernelMetadata m;
    const Value* name = k.get(".name");
    if (!name || name->kind != Value::kString) return "AMDGPU metadata: a kernel without a .name";
    m.name = name->s;
    auto num = [&](const char* key, uint64_t* v) {
      const Value* x = k.get(key);
      return !x || x->number(v);
    };
    if (!num(".kernarg_segment_size", &m.kernarg_segment_size) ||
        !num(".max_flat_workgroup_size", &m.max_flat_workgroup_size) ||
        !num(".group_segment_fixed_size", &m.group_segment_fixed_size))
      return "AMDGPU metadata: kernel '" + m.name + "' has a size that is not a number";
    if (const Value* args = k.get(".args")) {
      if (args->kind != Value::kArray) return "AMDGPU metadata: the .args of '" + m.name + "' are not a list";
      for (const Value& a : args->items) {
        const Value* kind = a.kind == Value::kMap ? a.get(".value_kind") : nullptr;
        if (!kind || kind->kind != Value::kString)
          return "AMDGPU metadata: an argument of '" + m.name + "' has no .value_kind";
        if (kind->s.rfind("hidden_", 0) == 0) continue;  // the runtime's own
        KernelArgMetadata am;
        am.value_kind = kind->s;
        const Value* sz = a.get(".size");
        const Value* off = a.get(".offset");
        if (!sz || !sz->number(&am.size) || !off || !off->number(&am.offset))
          return "AMDGPU metadata: an argument of '" + m.name + "' has no .size or .offset";
        m.args.push_back(std::move(am));
      }
    }
    out->push_back(std::move(m));
  }
  return "";
}

std::string check_launch_args(const KernelMetadata& m, const TsKernelArg* args, size_t n) {
  if (n != m.args.size())
    return plugin_support::strprintf("%zu arguments given; the code object's metadata lists %zu", n, m.args.size());
  for (size_t i = 0; i < n; ++i) {
    const KernelArgMetadata& want = m.args[i];
    if (args[i].kind == TS_KERNEL_ARG_BUFFER && !want.is_buffer())
      return plugin_support::strprintf("argument %zu is a buffer; the kernel takes a %llu-byte %s value there", i,
                       static_cast<unsigned long long>(want.size), want.value_kind.c_str());
    if (args[i].kind == TS_KERNEL_ARG_SCALAR && want.is_buffer())
      return plugin_support::strprintf("argument %zu is a scalar; the kernel takes a buffer (%s) there", i,
                       want.value_kind.c_str());
    if (args[i].kind == TS_KERNEL_ARG_SCALAR && args[i].size != want.size)
      return plugin_support::strprintf("scalar argument %zu is %zu bytes; the kernel takes %llu", i, args[i].size,
                       static_cast<unsigned long long>(want.size));
  }
  return "";
}


std::string read_kernel_metadata(const void* data, size_t size, std::vector<KernelMetadata>* out) {
  out->clear();
  const auto* p = static_cast<const unsigned char*>(data);
  // check_code_object accepted the header and the section table.
  const uint64_t shoff = rd<uint64_t>(p, 0x28);
  const uint16_t shentsize = rd<uint16_t>(p, 0x3a), shnum = rd<uint16_t>(p, 0x3c);
  for (uint16_t i = 0; i < shnum; ++i) {
    const size_t sh = static_cast<size_t>(shoff + uint64_t{i} * shentsize);
    if (rd<uint32_t>(p, sh + 4) != kShtNote) continue;
    const uint64_t off = rd<uint64_t>(p, sh + 0x18), len = rd<uint64_t>(p, sh + 0x20);
    if (off > size || len > size - off) return "a note section lies outside the code object";
    // Notes: namesz, descsz, type, the name and the descriptor, each padded
    // to 4 bytes.
    uint64_t at = 0;
    while (len - at >= 12) {
      const uint32_t namesz = rd<uint32_t>(p, off + at), descsz = rd<uint32_t>(p, off + at + 4);
      const uint32_t type = rd<uint32_t>(p, off + at + 8);
      const uint64_t name = at + 12, desc = name + ((uint64_t{namesz} + 3) & ~uint64_t{3});
      const uint64_t next = desc + ((uint64_t{descsz} + 3) & ~uint64_t{3});
      if (desc > len || descsz > len - desc) return "a note of the code object runs past its section";
      if (type == kNtAmdgpuMetadata && namesz == 7 && std::memcmp(p + off + name, "AMDGPU", 7) == 0)
        return decode_kernel_metadata(p + off + desc, descsz, out);
      if (next > len) break;
      at = next;
    }
  }
  return "";  // no metadata note: nothing to check against
}

}  // namespace tessera::hip
