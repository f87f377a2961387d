#include "mesh.hpp"

namespace tessera::mesh {

std::vector<int64_t> Coords(const std::vector<int64_t>& shape, int64_t device) {
  std::vector<int64_t> c(shape.size(), 0);
  for (size_t a = shape.size(); a-- > 0;) {
    c[a] = shape[a] > 0 ? device % shape[a] : 0;
    device = shape[a] > 0 ? device / shape[a] : 0;
  }
  return c;
}

std::vector<int64_t> Group(const std::vector<int64_t>& shape, const std::vector<int>& axes,
                           int64_t device) {
  std::vector<int64_t> base = Coords(shape, device);
  int64_t n = 1;
  for (int a : axes) n *= shape[static_cast<size_t>(a)];
  std::vector<int64_t> out;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<int64_t> c = base;
    int64_t rest = r;
    for (size_t k = axes.size(); k-- > 0;) {
      int64_t size = shape[static_cast<size_t>(axes[k])];
      c[static_cast<size_t>(axes[k])] = rest % size;
      rest /= size;
    }
    int64_t d = 0;
    for (size_t a = 0; a < shape.size(); ++a) d = d * shape[a] + c[a];
    out.push_back(d);
  }
  return out;
}

}  // namespace tessera::mesh
