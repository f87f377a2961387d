// Global <-> local tensors of SPMD programs (docs/spmd.md): a partitioned
// dim is cut into equal blocks along its mesh axes (over several, the block
// index is the coordinates on them taken row-major); devices with coordinate
// 0 on every partial-sum axis hold the value, the others zeros; every other
// axis holds copies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "mesh.hpp"
#include "program_impl.hpp"
#include "tessera/element_types.hpp"
#include "tessera/program.hpp"

namespace tessera {

namespace {

// The number of blocks dim `d` is cut into, and the device's block.
int64_t Parts(const Sharding& s, size_t d, const std::vector<int64_t>& mesh_shape) {
  int64_t n = 1;
  if (d < s.dim_axes.size())
    for (int a : s.dim_axes[d]) n *= mesh_shape[a];
  return n;
}
int64_t Block(const Sharding& s, size_t d, const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& c) {
  int64_t b = 0;
  if (d < s.dim_axes.size())
    for (int a : s.dim_axes[d]) b = b * mesh_shape[a] + c[a];
  return b;
}

// Element offset in the row-major global tensor of a device's local element
// at flat row-major index i.
struct BlockMap {
  std::vector<int64_t> local, global, origin;
  BlockMap(const Sharding& s, const std::vector<int64_t>& shape, const std::vector<int64_t>& global_shape,
           const std::vector<int64_t>& mesh_shape, int64_t device)
      : local(shape), global(global_shape), origin(shape.size(), 0) {
    std::vector<int64_t> c = mesh::Coords(mesh_shape, device);
    for (size_t d = 0; d < local.size(); ++d) origin[d] = Block(s, d, mesh_shape, c) * local[d];
  }
  int64_t operator()(int64_t i) const {
    int64_t off = 0, stride = 1;
    for (size_t d = local.size(); d-- > 0;) {
      off += (origin[d] + i % local[d]) * stride;
      i /= local[d];
      stride *= global[d];
    }
    return off;
  }
};

bool HoldsValue(const Sharding& s, const std::vector<int64_t>& mesh_shape, int64_t device) {
  std::vector<int64_t> c = mesh::Coords(mesh_shape, device);
  for (int a : s.partial_sum_axes)
    if (c[a] != 0) return false;
  return true;
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

std::vector<int64_t> Program::GlobalShape(size_t param) const {
  const ProgramImage& im = impl_->image;
  const ParamSpec& p = im.params.at(param);
  std::vector<int64_t> out = p.shape;
  // A dynamic dim (kDynamic, negative) stays dynamic: multiplied, it would
  // overflow.
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] >= 0) out[d] *= Parts(p.sharding, d, im.mesh_shape);
  return out;
}

std::vector<std::string> Program::ScatterGlobal(size_t param, const std::string& global) const {
  const ProgramImage& im = impl_->image;
  const ParamSpec& p = im.params.at(param);
  const size_t es = elements::DtypeSize(p.dtype);
  const std::vector<int64_t> gshape = GlobalShape(param);
  std::vector<std::string> out;
  for (int64_t d = 0; d < static_cast<int64_t>(im.devices()); ++d) {
    std::string local(p.bytes, '\0');
    if (HoldsValue(p.sharding, im.mesh_shape, d)) {
      BlockMap map(p.sharding, p.shape, gshape, im.mesh_shape, d);
      for (int64_t k = 0; k < Elements(p.shape); ++k) {
        const size_t from = static_cast<size_t>(map(k)) * es;
        if (from + es <= global.size() && (static_cast<size_t>(k) + 1) * es <= local.size())
          std::memcpy(&local[k * es], &global[from], es);
      }
    }
    out.push_back(std::move(local));
  }
  return out;
}

std::string Program::GatherGlobal(size_t param, const std::vector<std::string>& locals,
                                  double* replica_difference) const {
  const ProgramImage& im = impl_->image;
  const ParamSpec& p = im.params.at(param);
  const size_t es = elements::DtypeSize(p.dtype);
  const std::vector<int64_t> gshape = GlobalShape(param);
  std::vector<double> sum(static_cast<size_t>(Elements(gshape)), 0.0);
  std::map<std::vector<int64_t>, int64_t> first_holder;
  if (replica_difference) *replica_difference = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(im.devices()) && d < static_cast<int64_t>(locals.size()); ++d) {
    // Devices with the same coordinates on the partitioned and partial-sum
    // axes hold copies of one block: the first one counts.
    std::vector<int64_t> c = mesh::Coords(im.mesh_shape, d), key;
    for (size_t k = 0; k < p.sharding.dim_axes.size(); ++k) key.push_back(Block(p.sharding, k, im.mesh_shape, c));
    for (int a : p.sharding.partial_sum_axes) key.push_back(c[a]);
    auto [it, first] = first_holder.emplace(key, d);
    if (!first) {
      if (replica_difference && it->second < static_cast<int64_t>(locals.size())) {
        const std::string& a = locals[d];
        const std::string& b = locals[it->second];
        for (size_t k = 0; k + es <= a.size() && k + es <= b.size(); k += es) {
          double x = elements::Decode(reinterpret_cast<const unsigned char*>(&a[k]), p.dtype);
          double y = elements::Decode(reinterpret_cast<const unsigned char*>(&b[k]), p.dtype);
          *replica_difference = std::max(*replica_difference, std::fabs(x - y));
        }
      }
      continue;
    }
    BlockMap map(p.sharding, p.shape, gshape, im.mesh_shape, d);
    const std::string& x = locals[d];
    for (int64_t k = 0; k < Elements(p.shape) && static_cast<size_t>(k + 1) * es <= x.size(); ++k)
      sum[map(k)] += elements::Decode(reinterpret_cast<const unsigned char*>(&x[k * es]), p.dtype);
  }
  // Partial sums add exactly in double and are rounded once to the type.
  std::string out(sum.size() * es, '\0');
  for (size_t k = 0; k < sum.size(); ++k)
    elements::Encode(sum[k], reinterpret_cast<unsigned char*>(&out[k * es]), p.dtype);
  return out;
}

}  // namespace tessera
