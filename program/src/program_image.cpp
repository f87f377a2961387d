// ProgramImage <-> the .tsp file: a small versioned binary format.
//
//   u8[8] "TSPROG\0\1", u32 file version, u32 ABI major, u32 ABI minor,
//   then the fields of ProgramImage in declaration order: strings as u64
//   length + bytes, vectors as u64 count + elements, integers little-endian;
//   last a u64 FNV-1a 64 checksum of every byte before it.
//
// The reader checks every length against what is left of the file and
// every count against a bound, so a truncated, edited or foreign file is an
// error that says where it went wrong, never a crash or a huge allocation.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera/ir_version.h"
#include "tessera/output_file.hpp"
#include "tessera/program.hpp"

namespace tessera {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'P', 'R', 'O', 'G', '\0', '\1'};

// FNV-1a, 64 bit (http://www.isthe.com/chongo/tech/comp/fnv/): the file's
// checksum.  Small and dependency-free (this library does not link LLVM or
// zlib); it detects corruption, it is no defence against a forger who can
// write the cache anyway.
uint64_t Fnv1a64(const char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}
constexpr uint64_t kMaxFileBytes = uint64_t{4} << 30;

class Writer {
 public:
  void U32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), 4); }
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), 8); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Str(const std::string& s) {
    U64(s.size());
    out_ += s;
  }
  void Dim(const TsDim3& d) {
    U32(d.x);
    U32(d.y);
    U32(d.z);
  }
  template <class T, class F>
  void Vec(const std::vector<T>& v, F&& each) {
    U64(v.size());
    for (const T& x : v) each(x);
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(const std::string& bytes, std::string origin) : b_(bytes), origin_(std::move(origin)) {}
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void Fail(const std::string& what) {
    if (error_.empty())
      error_ = origin_ + ": " + what + " at byte " + std::to_string(at_) + " of " +
               std::to_string(b_.size()) + " (the file is truncated or not a Tessera program)";
  }
  bool Need(uint64_t n) {
    if (!ok()) return false;
    if (n > b_.size() - at_) {
      Fail("unexpected end of file");
      return false;
    }
    return true;
  }
  uint32_t U32() {
    uint32_t v = 0;
    if (Need(4)) std::memcpy(&v, b_.data() + at_, 4), at_ += 4;
    return v;
  }
  uint64_t U64() {
    uint64_t v = 0;
    if (Need(8)) std::memcpy(&v, b_.data() + at_, 8), at_ += 8;
    return v;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  std::string Str() {
    uint64_t n = U64();
    if (!Need(n)) return "";
    std::string s = b_.substr(at_, n);
    at_ += n;
    return s;
  }
  TsDim3 Dim() {
    TsDim3 d;
    d.x = U32();
    d.y = U32();
    d.z = U32();
    return d;
  }
  // A count of elements that each take at least `min_bytes` in the file.
  uint64_t Count(uint64_t min_bytes) {
    uint64_t n = U64();
    if (ok() && n > (b_.size() - at_) / (min_bytes ? min_bytes : 1)) {
      Fail("a count of " + std::to_string(n) + " that the file cannot hold");
      return 0;
    }
    return n;
  }
  template <class T, class F>
  void Vec(std::vector<T>* v, uint64_t min_bytes, F&& each) {
    uint64_t n = Count(min_bytes);
    for (uint64_t i = 0; i < n && ok(); ++i) v->push_back(each());
  }
  bool AtEnd() const { return at_ == b_.size(); }
  size_t Position() const { return at_; }

 private:
  const std::string& b_;
  std::string origin_;
  std::string error_;
  size_t at_ = 0;
};

void WriteSignature(Writer& w, const KernelSignature& k) {
  w.Str(k.name);
  w.Dim(k.grid);
  w.Dim(k.group_size);
  w.U64(k.shared_memory_bytes);
  w.Vec(k.params, [&](const KernelParamInfo& p) {
    w.U32(static_cast<uint32_t>(p.kind));
    w.Str(p.dtype);
    w.Vec(p.shape, [&](int64_t d) { w.I64(d); });
    w.U64(p.bytes);
    w.U32(p.access);
  });
}

KernelSignature ReadSignature(Reader& r) {
  KernelSignature k;
  k.name = r.Str();
  k.grid = r.Dim();
  k.group_size = r.Dim();
  k.shared_memory_bytes = r.U64();
  r.Vec(&k.params, 40, [&] {
    KernelParamInfo p;
    uint32_t kind = r.U32();
    if (kind > TS_KERNEL_ARG_SCALAR) r.Fail("a kernel parameter of unknown kind");
    p.kind = static_cast<TsKernelArgKind>(kind);
    p.dtype = r.Str();
    r.Vec(&p.shape, 8, [&] { return r.I64(); });
    p.bytes = r.U64();
    p.access = r.U32();
    return p;
  });
  return k;
}

}  // namespace

uint64_t ProgramImage::devices() const {
  uint64_t n = 1;
  for (int64_t s : mesh_shape) n *= static_cast<uint64_t>(s);
  return n;
}

std::string ProgramImage::Serialize() const {
  Writer w;
  w.out().append(kMagic, 8);
  w.U32(kProgramFileVersion);
  w.U32(TESSERA_ABI_VERSION_MAJOR);
  w.U32(TESSERA_ABI_VERSION_MINOR);
  w.Str(plugin);
  w.Str(target);
  w.Str(ir_version);
  w.Str(source_name);
  w.Str(function);
  w.Vec(mesh_axes, [&](const std::string& a) { w.Str(a); });
  w.Vec(mesh_shape, [&](int64_t s) { w.I64(s); });
  w.Vec(params, [&](const ParamSpec& p) {
    w.Str(p.name);
    w.U32(static_cast<uint32_t>(p.role));
    w.Str(p.dtype);
    w.Vec(p.shape, [&](int64_t d) { w.I64(d); });
    w.U64(p.bytes);
    w.Vec(p.sharding.dim_axes, [&](const std::vector<int>& axes) { w.Vec(axes, [&](int a) { w.I64(a); }); });
    w.Vec(p.sharding.partial_sum_axes, [&](int a) { w.I64(a); });
  });
  w.Vec(param_values, [&](int32_t v) { w.I64(v); });
  w.Vec(values, [&](const PlanValue& v) {
    w.Str(v.dtype);
    w.U64(v.bytes);
    w.I64(v.alias_of);
    w.U64(v.offset);
    w.U32(v.mesh_position ? 1 : 0);
  });
  w.Vec(executables, [&](const ExecutableImage& e) {
    w.Str(e.format);
    w.Str(e.data);
    w.Vec(e.kernels, [&](const KernelSignature& k) { WriteSignature(w, k); });
  });
  w.Vec(steps, [&](const PlanStep& s) {
    w.U32(static_cast<uint32_t>(s.kind));
    w.U32(s.executable);
    w.Str(s.kernel);
    w.Dim(s.grid);
    w.Dim(s.group_size);
    w.U64(s.shared_memory_bytes);
    w.Vec(s.args, [&](const PlanArg& a) {
      w.U32(static_cast<uint32_t>(a.kind));
      w.U32(a.index);
    });
    w.U32(s.input);
    w.U32(s.output);
    w.Vec(s.axes, [&](int a) { w.I64(a); });
    w.U64(s.count);
    w.U32(static_cast<uint32_t>(s.reduce));
    w.U32(static_cast<uint32_t>(s.dtype));
    w.U32(s.root);
    w.Str(s.location);
    w.U32(s.stream);
  });
  w.U32(placed ? 1 : 0);
  for (const auto* side : {&placed_in, &placed_out})
    w.Vec(*side, [&](const std::vector<std::vector<std::string>>& dims) {
      w.Vec(dims, [&](const std::vector<std::string>& axes) { w.Vec(axes, [&](const std::string& a) { w.Str(a); }); });
    });
  w.Str(source_sha256);
  w.Vec(state_updates, [&](const StateUpdate& u) {
    w.U32(u.result_param);
    w.U32(u.arg_param);
  });
  w.I64(step_ok_param);
  w.Str(cache_key);
  const uint64_t sum = Fnv1a64(w.out().data(), w.out().size());
  w.U64(sum);
  return std::move(w.out());
}

StatusOr<ProgramImage> ProgramImage::Deserialize(const std::string& bytes, const std::string& origin) {
  if (bytes.size() < 20 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    return Status(StatusCode::kInvalidArgument,
                  origin + ": not a compiled Tessera program (no TSPROG header): compile it "
                           "with tessera-compile, or run the .mlir source itself");
  Reader r(bytes, origin);
  for (int i = 0; i < 2; ++i) r.U32();  // magic
  uint32_t version = r.U32(), major = r.U32(), minor = r.U32();
  if (std::memcmp(bytes.data(), kMagic, 8) != 0 || version != kProgramFileVersion)
    return Status(StatusCode::kAbiMismatch,
                  origin + ": program file version " + std::to_string(version) +
                      "; this Tessera reads version " + std::to_string(kProgramFileVersion) +
                      ": compile the program again with this Tessera's tessera-compile");
  if (major != TESSERA_ABI_VERSION_MAJOR)
    return Status(StatusCode::kAbiMismatch,
                  origin + ": compiled for plugin ABI " + std::to_string(major) + "." +
                      std::to_string(minor) + "; this Tessera implements ABI " +
                      std::to_string(TESSERA_ABI_VERSION_MAJOR) + "." +
                      std::to_string(TESSERA_ABI_VERSION_MINOR) + ": compile it again");
  ProgramImage im;
  im.plugin = r.Str();
  im.target = r.Str();
  im.ir_version = r.Str();
  im.source_name = r.Str();
  im.function = r.Str();
  r.Vec(&im.mesh_axes, 8, [&] { return r.Str(); });
  r.Vec(&im.mesh_shape, 8, [&] { return r.I64(); });
  r.Vec(&im.params, 48, [&] {
    ParamSpec p;
    p.name = r.Str();
    uint32_t role = r.U32();
    if (role > static_cast<uint32_t>(ParamRole::kScalar)) r.Fail("a parameter of unknown role");
    p.role = static_cast<ParamRole>(role);
    p.dtype = r.Str();
    r.Vec(&p.shape, 8, [&] { return r.I64(); });
    p.bytes = r.U64();
    r.Vec(&p.sharding.dim_axes, 8, [&] {
      std::vector<int> axes;
      r.Vec(&axes, 8, [&] { return static_cast<int>(r.I64()); });
      return axes;
    });
    r.Vec(&p.sharding.partial_sum_axes, 8, [&] { return static_cast<int>(r.I64()); });
    return p;
  });
  r.Vec(&im.param_values, 8, [&] { return static_cast<int32_t>(r.I64()); });
  r.Vec(&im.values, 20, [&] {
    PlanValue v;
    v.dtype = r.Str();
    v.bytes = r.U64();
    const int64_t alias = r.I64();
    if (alias < -1 || alias > std::numeric_limits<int32_t>::max()) r.Fail("a view of an impossible value");
    v.alias_of = static_cast<int32_t>(alias);
    v.offset = r.U64();
    const uint32_t position = r.U32();
    if (position > 1) r.Fail("a value of unknown contents");
    v.mesh_position = position == 1;
    return v;
  });
  r.Vec(&im.executables, 24, [&] {
    ExecutableImage e;
    e.format = r.Str();
    e.data = r.Str();
    r.Vec(&e.kernels, 40, [&] { return ReadSignature(r); });
    return e;
  });
  r.Vec(&im.steps, 64, [&] {
    PlanStep s;
    uint32_t kind = r.U32();
    if (kind > PlanStep::kReduceScatter) r.Fail("a step of unknown kind");
    s.kind = static_cast<PlanStep::Kind>(kind);
    s.executable = r.U32();
    s.kernel = r.Str();
    s.grid = r.Dim();
    s.group_size = r.Dim();
    s.shared_memory_bytes = r.U64();
    r.Vec(&s.args, 8, [&] {
      PlanArg a;
      uint32_t k = r.U32();
      if (k > PlanArg::kScalarParam) r.Fail("a launch argument of unknown kind");
      a.kind = static_cast<PlanArg::Kind>(k);
      a.index = r.U32();
      return a;
    });
    s.input = r.U32();
    s.output = r.U32();
    r.Vec(&s.axes, 8, [&] { return static_cast<int>(r.I64()); });
    s.count = r.U64();
    // Checked before they become enums: a value outside TsReduceOp or
    // TsDataType, loaded as the enum, is undefined behaviour (UBSan,
    // fuzz/cache_fuzzer.cpp).
    const uint32_t reduce = r.U32(), dtype = r.U32();
    if (reduce > TS_REDUCE_MIN) r.Fail("a step of unknown reduction " + std::to_string(reduce));
    if (dtype > TS_DTYPE_U8) r.Fail("a step of unknown data type " + std::to_string(dtype));
    if (r.ok()) {
      s.reduce = static_cast<TsReduceOp>(reduce);
      s.dtype = static_cast<TsDataType>(dtype);
    }
    s.root = r.U32();
    s.location = r.Str();
    s.stream = r.U32();
    if (s.stream >= kPlanStreams) r.Fail("a step on stream " + std::to_string(s.stream));
    return s;
  });
  const uint32_t placed = r.U32();
  if (placed > 1) r.Fail("a placement flag of " + std::to_string(placed));
  im.placed = placed == 1;
  for (auto* side : {&im.placed_in, &im.placed_out})
    r.Vec(side, 8, [&] {
      std::vector<std::vector<std::string>> dims;
      r.Vec(&dims, 8, [&] {
        std::vector<std::string> axes;
        r.Vec(&axes, 8, [&] { return r.Str(); });
        return axes;
      });
      return dims;
    });
  if (r.ok() && !im.placed && (!im.placed_in.empty() || !im.placed_out.empty()))
    r.Fail("shardings given at compile time without a placement");
  im.source_sha256 = r.Str();
  r.Vec(&im.state_updates, 8, [&] {
    StateUpdate u;
    u.result_param = r.U32();
    u.arg_param = r.U32();
    return u;
  });
  const int64_t step_ok = r.I64();
  if (step_ok < -1 || step_ok > std::numeric_limits<int32_t>::max()) r.Fail("a step_ok param of " + std::to_string(step_ok));
  im.step_ok_param = static_cast<int32_t>(step_ok);
  im.cache_key = r.Str();
  // The trailer: the checksum of every byte before it.  The structure above
  // is checked field by field; this catches what still parses, e.g. edited
  // bytes inside an executable image (a cached program is loaded as code).
  const size_t body = r.Position();
  const uint64_t sum = r.U64();
  if (r.ok() && sum != Fnv1a64(bytes.data(), body))
    r.Fail("checksum mismatch (the file changed after it was written)");
  if (r.ok() && !r.AtEnd()) r.Fail("trailing bytes");
  if (!r.ok()) return Status(StatusCode::kDataLoss, r.error());
  if (im.ir_version != TESSERA_IR_VERSION)
    return Status(StatusCode::kAbiMismatch,
                  origin + ": compiled by Tessera IR '" + im.ir_version + "'; this Tessera is '" +
                      TESSERA_IR_VERSION + "': compile the program again");
  return im;
}

StatusOr<ProgramImage> ProgramImage::ReadFile(const std::string& path) {
  // Regular files only: a FIFO would block the open, a folder makes the
  // stream's read throw.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return Status(StatusCode::kInvalidArgument, path + ": not a regular file (a compiled program is one)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, path + ": cannot open the compiled program");
  // Read at most the limit (+1 to know it was passed), whatever the file
  // claims to be: /dev/zero and FIFOs end too.
  std::string bytes;
  constexpr size_t kChunk = size_t{1} << 20;
  char buffer[4096];
  while (in && bytes.size() <= kMaxFileBytes) {
    in.read(buffer, sizeof buffer);
    bytes.append(buffer, static_cast<size_t>(in.gcount()));
    if (bytes.capacity() - bytes.size() < sizeof buffer) bytes.reserve(bytes.size() + kChunk);
  }
  if (bytes.size() > kMaxFileBytes)
    return Status(StatusCode::kInvalidArgument,
                  path + ": larger than the " + FormatBytes(kMaxFileBytes) + " a program file may be");
  return Deserialize(bytes, path);
}

Status ProgramImage::WriteFile(const std::string& path) const {
  // Atomic for a regular file (a crash or a full disk leaves the old file
  // or none); a device such as /dev/null is written, never replaced.
  return WriteOutputFile(path, Serialize());
}

}  // namespace tessera
