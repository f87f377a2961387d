// A subgroup reduction of i64 values (GroupNonUniformIAdd on i64: needs
// shaderSubgroupExtendedTypes), run by VulkanTileIr.SubgroupReduceI64 and,
// with the feature masked, refused by MaskedFeatures.SubgroupExtendedTypes.
// out[i] = sum over lane i's subgroup of (x[i] << 32).
func.func @sg_i64(%x: memref<64xi64>, %out: memref<64xi64>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1>} {
  %c32 = arith.constant 32 : i64
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<64xi64>
  %w = arith.shli %v, %c32 : i64
  %s = tessera_tile.subgroup_reduce add %w : i64
  memref.store %s, %out[%l] : memref<64xi64>
  return
}
