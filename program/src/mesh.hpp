// Mesh arithmetic of SPMD programs, on the host (the same rules as the
// compiler's tessera::graph::meshCoords / collectiveGroup, docs/spmd.md):
// devices are numbered row-major over the mesh shape.
#ifndef TESSERA_PROGRAM_MESH_HPP_
#define TESSERA_PROGRAM_MESH_HPP_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::mesh {

// Device d's coordinate on every axis.
std::vector<int64_t> Coords(const std::vector<int64_t>& shape, int64_t device);
// The devices that take part with `device` in a collective over `axes`, in
// rank order (row-major over `axes` as given; the other coordinates fixed).
std::vector<int64_t> Group(const std::vector<int64_t>& shape, const std::vector<int>& axes,
                           int64_t device);

}  // namespace tessera::mesh

#endif
