// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @matmul_k(%a: tensor<4x8xf32>, %b: tensor<7x4xf32>) {
  // expected-error @+1 {{contraction dimensions differ: lhs has K = 8, rhs has K = 7}}
  %c = tessera_graph.matmul %a, %b : tensor<4x8xf32>, tensor<7x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{result shape must be [4, 4], got [4, 5]}}
  %c = tessera_graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @fp8_accumulate(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x4xf8E4M3FN>) {
  // expected-error @+1 {{cannot accumulate}}
  %c = tessera_graph.matmul %a, %b : tensor<4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN> -> tensor<4x4xf16>
  return
}

// -----

func.func @fp8_e5m2_accumulate(%a: tensor<4x8xf8E5M2>, %b: tensor<8x4xf8E4M3FN>) {
  // expected-error @+1 {{fp8 is a storage type: accumulate in f32}}
  %c = tessera_graph.matmul %a, %b : tensor<4x8xf8E5M2>, tensor<8x4xf8E4M3FN> -> tensor<4x4xf8E5M2>
  return
}

// -----

func.func @mixed_non_fp8(%a: tensor<4x8xbf16>, %b: tensor<8x4xf8E5M2>) {
  // expected-error @+1 {{operand element types differ: 'bf16' and 'f8E5M2' (only fp8 operands may mix: f8E4M3FN with f8E5M2)}}
  %c = tessera_graph.matmul %a, %b : tensor<4x8xbf16>, tensor<8x4xf8E5M2> -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes 'tensor<4x8xf32>' and 'tensor<4xf32>' do not broadcast}}
  %c = tessera_graph.add %a, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @broadcast_result(%a: tensor<4x1xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{result type 'tensor<4x1xf32>' must be 'tensor<4x8xf32>' (the broadcast of the operands)}}
  %c = tessera_graph.mul %a, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @broadcast_elements(%a: tensor<4x8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{element types differ: 'f32' and 'f16'}}
  %c = tessera_graph.max %a, %b : tensor<4x8xf32>, tensor<8xf16>
  return
}

// -----

func.func @pow_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{needs a floating-point tensor, got 'i32'}}
  %c = tessera_graph.pow %a, %a : tensor<4xi32>, tensor<4xi32>
  return
}

// -----

func.func @sqrt_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{needs a floating-point tensor, got 'i32'}}
  %c = tessera_graph.sqrt %a : tensor<4xi32>
  return
}

// -----

func.func @gelu_form(%a: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be "tanh" or "none" (exact), got "erf"}}
  %c = tessera_graph.gelu %a {approximate = "erf"} : tensor<4xf32>
  return
}

// -----

func.func @keepdims_shape(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be 'tensor<4xf32>' or, keeping the reduced dims, 'tensor<4x1xf32>'}}
  %c = tessera_graph.reduce sum %a dims = [1] order = pairwise : tensor<4x8xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @mean_int(%a: tensor<4x8xi32>) {
  // expected-error @+1 {{mean needs a floating-point tensor, got 'i32'}}
  %c = tessera_graph.reduce mean %a dims = [1] order = pairwise : tensor<4x8xi32> -> tensor<4xi32>
  return
}

// -----

tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @mean_all_reduce(%a: tensor<8xf32>) {
  // expected-error @+1 {{all_reduce takes sum, max or min}}
  %c = tessera_graph.all_reduce mean %a over @mesh ["tp"] : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @norm_scale(%x: tensor<4x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{scale and shift must be 'tensor<8xf32>' (the last dim), got 'tensor<4xf32>'}}
  %c = tessera_graph.layernorm %x, %g, %b : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>
  return
}

// -----

func.func @norm_int(%x: tensor<4x8xi32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{needs a floating-point tensor, got 'i32'}}
  %c = tessera_graph.rmsnorm %x, %g : tensor<4x8xi32>, tensor<8xi32>
  return
}

// -----

func.func @norm_eps(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{epsilon must be >= 0}}
  %c = tessera_graph.rmsnorm %x, %g {epsilon = -1.0 : f32} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

// expected-error @+1 {{layout blocked block [16, 16] does not divide the shape [64, 24]}}
func.func @layout_divides(%a: tensor<64x24xf32, #tessera_graph.layout<blocked<16, 16>>>) {
  return
}

// -----

// expected-error @+1 {{micro tile [3, 4] does not divide macro tile [16, 8]}}
func.func @tiled_micro(%a: tensor<64x16xf32, #tessera_graph.layout<tiled<[16, 8], [3, 4]>>>) {
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 4]
func.func @bad_axis(%a: tensor<8xf32>) {
  // expected-error @+1 {{mesh @mesh has no axis 'pp'}}
  %r = tessera_graph.all_reduce sum %a over @mesh ["pp"] : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
// expected-error @+1 {{mesh @mesh has no axis 'tp'}}
func.func @bad_shard(%a: tensor<8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>}) {
  return
}

// -----

func.func @no_mesh(%a: tensor<8xf32>) {
  // expected-error @+1 {{mesh @nowhere does not exist}}
  %r = tessera_graph.all_reduce sum %a over @nowhere ["tp"] : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_shape(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be 'tensor<4xf32>'}}
  %s = tessera_graph.reduce sum %a dims = [1] order = sequential : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

tessera_graph.mesh @mesh axes = ["tp"] shape = [4]
func.func @scatter(%a: tensor<6x8xf32>) {
  // expected-error @+1 {{dimension 0 (6) is not divisible by the 4 ranks}}
  %r = tessera_graph.reduce_scatter sum %a over @mesh ["tp"] dim = 0 : tensor<6x8xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @unknown_op(%a: tensor<8xf32>) {
  // expected-error @+1 {{custom op 'tessera_graph.frobnicate' is unknown}}
  %r = tessera_graph.frobnicate %a : tensor<8xf32>
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// expected-error @+1 {{sharding uses mesh axis 'tp' twice: an axis partitions one dim, replicates or reduces}}
func.func @axis_twice(%a: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = ["tp"], reduce = []>}) {
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// expected-error @+1 {{sharding uses mesh axis 'dp' twice: an axis partitions one dim, replicates or reduces}}
func.func @axis_twice_in_one_dim(%a: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "dp"], ""], replicate = [], reduce = []>}) {
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// expected-error @+1 {{sharding uses mesh axis 'tp' twice: an axis partitions one dim, replicates or reduces}}
func.func @axis_in_two_dims(%a: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], "tp"], replicate = [], reduce = []>}) {
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// expected-error @+1 {{sharding dims entry 1 must be an axis name, "" or a list of axis names (a dim split over several axes), not 1 : i64}}
func.func @dims_entry_not_a_name(%a: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", 1], replicate = [], reduce = []>}) {
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// expected-error @+1 {{sharding dims entry 0 lists "": each element of a list must be a mesh axis name}}
func.func @empty_name_in_list(%a: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", ""], ""], replicate = [], reduce = []>}) {
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// expected-error @+1 {{mesh @mesh has no axis 'pp'}}
func.func @unknown_axis_in_list(%a: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "pp"], ""], replicate = [], reduce = []>}) {
  return
}

// -----

tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
// expected-error @+1 {{result 0: mesh @mesh has no axis 'tp'}}
func.func @bad_result_shard(%a: tensor<8xf32>) -> (tensor<8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>}) {
  return %a : tensor<8xf32>
}

// -----

tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
// expected-error @+1 {{result 0: sharding has 2 dims entries for a tensor of rank 1}}
func.func @result_shard_rank(%a: tensor<8xf32>) -> (tensor<8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>}) {
  return %a : tensor<8xf32>
}

// -----

func.func @dynamic_shape(%a: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %r = tessera_graph.exp %a : tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

func.func @perm(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{perm must be a permutation of [0, 2), got 0}}
  %t = tessera_graph.transpose %x perm = [0, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{changes the element count: 32 -> 30}}
  %t = tessera_graph.reshape %x : tensor<4x8xf32> -> tensor<5x6xf32>
  return
}

// -----

func.func @slice_past_end(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dim 1: offset 2 + (4 - 1) * stride 2 reads past the input's 8 elements}}
  %t = tessera_graph.slice %x offsets = [0, 2] strides = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast_dims(%x: tensor<3xf32>) {
  // expected-error @+1 {{input dim 0 (3) must be 1 or the size of result dim 1 (8)}}
  %t = tessera_graph.broadcast_in_dim %x dims = [1] : tensor<3xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @iota_dim() {
  // expected-error @+1 {{dim 2 out of range for rank 2}}
  %t = tessera_graph.iota dim = 2 : tensor<4x8xi32>
  return
}

// -----

func.func @gather_ids(%t: tensor<6x32xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{indices must be i32, got 'f32'}}
  %e = tessera_graph.gather %t, %i : tensor<6x32xf32>, tensor<4xf32> -> tensor<4x32xf32>
  return
}

// -----

func.func @gather_shape(%t: tensor<6x32xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{result must be 'tensor<4x32xf32>' (the indices' shape, then the table's row)}}
  %e = tessera_graph.gather %t, %i : tensor<6x32xf32>, tensor<4xi32> -> tensor<32x4xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<4x8xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{input 'tensor<3x3xf32>' differs from the result 'tensor<4x11xf32>' in dim 0 (only dim 1 may differ)}}
  %c = tessera_graph.concat %a, %b dim = 1 : tensor<4x8xf32>, tensor<3x3xf32> -> tensor<4x11xf32>
  return
}

// -----

func.func @concat_sum(%a: tensor<4x8xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{the inputs' dim 1 sum to 11, the result has 12}}
  %c = tessera_graph.concat %a, %b dim = 1 : tensor<4x8xf32>, tensor<4x3xf32> -> tensor<4x12xf32>
  return
}

// -----

func.func @pad_shape(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be 'tensor<7x10xf32>'}}
  %p = tessera_graph.pad %a low = [1, 0] high = [2, 2] value = 0.0 : tensor<4x8xf32> -> tensor<7x9xf32>
  return
}

// -----

func.func @argmax_type(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be 'tensor<4xi32>'}}
  %m = tessera_graph.argmax %a dim = 1 : tensor<4x8xf32> -> tensor<4xf32>
  return
}


// -----

func.func @compare_types(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>) {
  // expected-error @+1 {{element types differ: 'f32' and 'i32'}}
  %c = tessera_graph.compare lt %a, %b : tensor<4x8xf32>, tensor<4x8xi32> -> tensor<4x8xi1>
  return
}

// -----

func.func @compare_broadcast(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes 'tensor<4x8xf32>' and 'tensor<4xf32>' do not broadcast}}
  %c = tessera_graph.compare lt %a, %b : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xi1>
  return
}

// -----

func.func @compare_result(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{result type 'tensor<4x8xf32>' must be 'tensor<4x8xi1>' (the broadcast of the operands, i1)}}
  %c = tessera_graph.compare lt %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @compare_i1_order(%a: tensor<4x8xi1>) {
  // expected-error @+1 {{compares i1 values with eq or ne only, got lt}}
  %c = tessera_graph.compare lt %a, %a : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  return
}

// -----

func.func @compare_predicate(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{expected}}
  %c = tessera_graph.compare less %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  return
}

// -----

func.func @compare_layout(%a: tensor<16x16xf32, #tessera_graph.layout<col_major>>) {
  // expected-error @+1 {{needs row-major tensors (insert a convert_layout)}}
  %c = tessera_graph.compare lt %a, %a : tensor<16x16xf32, #tessera_graph.layout<col_major>>, tensor<16x16xf32, #tessera_graph.layout<col_major>> -> tensor<16x16xi1>
  return
}

// -----

func.func @select_cond(%c: tensor<4x8xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{condition must be an i1 tensor (a compare result), got 'tensor<4x8xf32>'}}
  %s = tessera_graph.select %c, %a, %a : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @select_types(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<4x8xbf16>) {
  // expected-error @+1 {{element types of the two choices differ: 'f32' and 'bf16'}}
  %s = tessera_graph.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xbf16>
  return
}

// -----

func.func @select_broadcast(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error @+1 {{do not broadcast}}
  %s = tessera_graph.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @select_result(%c: tensor<4x8xi1>, %a: tensor<8xf32>) {
  // expected-error @+1 {{result type 'tensor<8xf32>' must be 'tensor<4x8xf32>'}}
  %s = tessera_graph.select %c, %a, %a : tensor<4x8xi1>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @i1_add(%a: tensor<4x8xi1>) {
  // expected-error @+1 {{does not take i1 tensors (i1 is a truth value: use select, or cast it to a number type first), got 'tensor<4x8xi1>'}}
  %s = tessera_graph.add %a, %a : tensor<4x8xi1>, tensor<4x8xi1>
  return
}

// -----

func.func @i1_neg(%a: tensor<4x8xi1>) {
  // expected-error @+1 {{does not take i1 tensors}}
  %s = tessera_graph.neg %a : tensor<4x8xi1>
  return
}

// -----

func.func @i1_exp(%a: tensor<4x8xi1>) {
  // expected-error @+1 {{needs a floating-point tensor, got 'i1'}}
  %s = tessera_graph.exp %a : tensor<4x8xi1>
  return
}

// -----

func.func @i1_matmul(%a: tensor<4x8xi1>, %b: tensor<8x4xi1>) {
  // expected-error @+1 {{does not take i1 tensors (cast i1 to a number type first)}}
  %c = tessera_graph.matmul %a, %b : tensor<4x8xi1>, tensor<8x4xi1> -> tensor<4x4xi1>
  return
}

// -----

func.func @i1_reduce(%a: tensor<4x8xi1>) {
  // expected-error @+1 {{does not take i1 tensors (to count true values, cast to i32 and reduce sum)}}
  %s = tessera_graph.reduce sum %a dims = [1] order = pairwise : tensor<4x8xi1> -> tensor<4xi1>
  return
}

// -----

func.func @i1_softmax(%a: tensor<4x8xi1>) {
  // expected-error @+1 {{needs a floating-point tensor, got 'i1'}}
  %s = tessera_graph.softmax %a dim = 1 : tensor<4x8xi1>
  return
}

// -----

func.func @i1_iota() {
  // expected-error @+1 {{does not take i1 tensors (an index does not fit in i1: iota in i32, then compare)}}
  %s = tessera_graph.iota dim = 1 : tensor<4x8xi1>
  return
}

// -----

func.func @i1_argmax(%a: tensor<4x8xi1>) {
  // expected-error @+1 {{does not take i1 tensors (cast i1 to i8 or i32 first)}}
  %m = tessera_graph.argmax %a dim = 1 : tensor<4x8xi1> -> tensor<4xi32>
  return
}

// -----

tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @i1_all_reduce(%a: tensor<8xi1>) {
  // expected-error @+1 {{does not take i1 tensors (cast i1 to i8 before a collective)}}
  %r = tessera_graph.all_reduce max %a over @mesh ["tp"] : tensor<8xi1> -> tensor<8xi1>
  return
}

// -----

// A sharded argument of a function whose body has no block arguments: the
// verifier must not read past them (found by fuzz/ir_fuzzer.cpp).
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
// expected-error @+1 {{entry block must have 1 arguments to match function signature}}
func.func @no_block_arguments(tensor<8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>}) {
  return
}

// -----

func.func @quantize_type(%x: tensor<4x8xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{quantizes f32 to i8, not 'f32' to 'i32'}}
  %q = tessera_graph.quantize %x, %s : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xi32>
  return
}

// -----

func.func @quantize_scale_no_axis(%x: tensor<4x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{has 8 values: per channel, say along which dim (axis = d)}}
  %q = tessera_graph.quantize %x, %s : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi8>
  return
}

// -----

func.func @quantize_scale_channels(%x: tensor<4x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{per-channel scale has 8 values; dim 0 of the input has 4}}
  %q = tessera_graph.quantize %x, %s axis = 0 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi8>
  return
}

// -----

func.func @quantize_axis(%x: tensor<4x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %q = tessera_graph.quantize %x, %s axis = 2 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi8>
  return
}

// -----

func.func @quantize_scale_type(%x: tensor<4x8xf32>, %s: tensor<1xbf16>) {
  // expected-error @+1 {{scale must be a tensor<1xf32> (per tensor) or tensor<Cxf32> (per channel)}}
  %q = tessera_graph.quantize %x, %s : tensor<4x8xf32>, tensor<1xbf16> -> tensor<4x8xi8>
  return
}

// -----

func.func @dequantize_type(%q: tensor<4x8xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{dequantizes i8 or i32 to f32}}
  %y = tessera_graph.dequantize %q, %s : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @accum_of_another_kind(%a: tensor<4x8xi8>, %b: tensor<8x4xi8>) {
  // expected-error @+1 {{accum = f32 for 'i8' operands: the accumulator of an integer computation must be a signless integer type (accum = i32)}}
  %c = tessera_graph.matmul %a, %b {accum = f32} : tensor<4x8xi8>, tensor<8x4xi8> -> tensor<4x4xi32>
  return
}

// -----

func.func @accum_float_for_float(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>) {
  // expected-error @+1 {{the accumulator of a float computation must be a float type (accum = f32)}}
  %c = tessera_graph.matmul %a, %b {accum = i32} : tensor<4x8xbf16>, tensor<8x4xbf16> -> tensor<4x4xf32>
  return
}

// -----

func.func @accum_on_max(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{accum applies to sum and mean; max is exact in any type}}
  %m = tessera_graph.reduce max %x dims = [1] order = pairwise {accum = f32} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @stochastic_without_seed(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{stochastic rounding needs a seed (seed = S)}}
  %y = tessera_graph.cast %x {rounding = "stochastic"} : tensor<4x8xf32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @stochastic_to_i8(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{stochastic rounding narrows f32 to bf16, f16, f8E4M3FN or f8E5M2, not 'f32' to 'i8'}}
  %y = tessera_graph.cast %x {rounding = "stochastic", seed = 1} : tensor<4x8xf32> -> tensor<4x8xi8>
  return
}

// -----

func.func @unknown_rounding(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{rounding = "up": write "nearest_even" (the default) or "stochastic"}}
  %y = tessera_graph.cast %x {rounding = "up"} : tensor<4x8xf32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @seed_without_stochastic(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{seed applies to rounding = "stochastic" only}}
  %y = tessera_graph.cast %x {seed = 3} : tensor<4x8xf32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @position_without_stochastic(%x: tensor<4x8xf32>, %p: tensor<1xi32>) {
  // expected-error @+1 {{a mesh position and global strides key stochastic rounding's random bits: they apply to rounding = "stochastic" only}}
  %y = tessera_graph.cast %x, %p {global_strides = array<i64: 8, 1>, mesh_shape = array<i64: 2>, mesh_offsets = array<i64: 32>} : tensor<4x8xf32>, tensor<1xi32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @position_without_strides(%x: tensor<4x8xf32>, %p: tensor<1xi32>) {
  // expected-error @+1 {{an SPMD part's global index needs the device's position (an operand from tessera_graph.mesh_position) and global_strides, mesh_shape and mesh_offsets together}}
  %y = tessera_graph.cast %x, %p {rounding = "stochastic", seed = 1} : tensor<4x8xf32>, tensor<1xi32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @strides_without_position(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{an SPMD part's global index needs the device's position}}
  %y = tessera_graph.cast %x {rounding = "stochastic", seed = 1, global_strides = array<i64: 8, 1>} : tensor<4x8xf32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @position_of_wrong_type(%x: tensor<4x8xf32>, %p: tensor<2xi32>) {
  // expected-error @+1 {{the mesh position must be a tensor<1xi32> (tessera_graph.mesh_position), not 'tensor<2xi32>'}}
  %y = tessera_graph.cast %x, %p {rounding = "stochastic", seed = 1, global_strides = array<i64: 8, 1>, mesh_shape = array<i64: 2>, mesh_offsets = array<i64: 32>} : tensor<4x8xf32>, tensor<2xi32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @global_strides_of_wrong_rank(%x: tensor<4x8xf32>, %p: tensor<1xi32>) {
  // expected-error @+1 {{global_strides has 1 entries for a rank-2 tensor: give one per dim}}
  %y = tessera_graph.cast %x, %p {rounding = "stochastic", seed = 1, global_strides = array<i64: 8>, mesh_shape = array<i64: 2>, mesh_offsets = array<i64: 32>} : tensor<4x8xf32>, tensor<1xi32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @mesh_offsets_per_axis(%x: tensor<4x8xf32>, %p: tensor<1xi32>) {
  // expected-error @+1 {{mesh_shape and mesh_offsets need one entry per mesh axis (2 and 1)}}
  %y = tessera_graph.cast %x, %p {rounding = "stochastic", seed = 1, global_strides = array<i64: 8, 1>, mesh_shape = array<i64: 2, 2>, mesh_offsets = array<i64: 32>} : tensor<4x8xf32>, tensor<1xi32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @empty_mesh_axis(%x: tensor<4x8xf32>, %p: tensor<1xi32>) {
  // expected-error @+1 {{mesh_shape entries must be positive}}
  %y = tessera_graph.cast %x, %p {rounding = "stochastic", seed = 1, global_strides = array<i64: 8, 1>, mesh_shape = array<i64: 0>, mesh_offsets = array<i64: 32>} : tensor<4x8xf32>, tensor<1xi32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @negative_global_stride(%x: tensor<4x8xf32>, %p: tensor<1xi32>) {
  // expected-error @+1 {{global_strides and mesh_offsets must not be negative}}
  %y = tessera_graph.cast %x, %p {rounding = "stochastic", seed = 1, global_strides = array<i64: -8, 1>, mesh_shape = array<i64: 2>, mesh_offsets = array<i64: 32>} : tensor<4x8xf32>, tensor<1xi32> -> tensor<4x8xbf16>
  return
}

// -----

func.func @mesh_position_of_no_mesh() {
  // expected-error @+1 {{mesh @nowhere does not exist}}
  %p = tessera_graph.mesh_position @nowhere : tensor<1xi32>
  return
}

// -----

tessera_graph.mesh @m axes = ["tp"] shape = [2]
func.func @mesh_position_type() {
  // expected-error @+1 {{result must be a tensor<1xi32>, not 'tensor<2xi32>'}}
  %p = tessera_graph.mesh_position @m : tensor<2xi32>
  return
}

// -----

func.func @attention_grad_dout(%q: tensor<64x16xf32>, %kt: tensor<16x80xf32>, %v: tensor<80x8xf32>, %o: tensor<64x8xf32>, %do: tensor<64x4xf32>) {
  // expected-error @+1 {{dout must be [64, 8] (queries x value dim), got 'tensor<64x4xf32>'}}
  %dq, %dkt, %dv = tessera_graph.attention_grad %q, %kt, %v, %o, %do scale = 0.25
      : tensor<64x16xf32>, tensor<16x80xf32>, tensor<80x8xf32>, tensor<64x8xf32>, tensor<64x4xf32>
  return
}

// -----

func.func @attention_grad_type(%q: tensor<64x16xbf16>, %kt: tensor<16x80xf32>, %v: tensor<80x8xf32>, %o: tensor<64x8xf32>, %do: tensor<64x8xf32>) {
  // expected-error @+1 {{query must be f32, got 'tensor<64x16xbf16>'}}
  %dq, %dkt, %dv = tessera_graph.attention_grad %q, %kt, %v, %o, %do scale = 0.25
      : tensor<64x16xbf16>, tensor<16x80xf32>, tensor<80x8xf32>, tensor<64x8xf32>, tensor<64x8xf32>
  return
}

// -----

func.func @attention_grad_keys(%q: tensor<64x16xf32>, %kt: tensor<16x80xf32>, %v: tensor<70x8xf32>, %o: tensor<64x8xf32>, %do: tensor<64x8xf32>) {
  // expected-error @+1 {{value has 70 rows but key_t has 80 keys}}
  %dq, %dkt, %dv = tessera_graph.attention_grad %q, %kt, %v, %o, %do scale = 0.25
      : tensor<64x16xf32>, tensor<16x80xf32>, tensor<70x8xf32>, tensor<64x8xf32>, tensor<64x8xf32>
  return
}

// -----

// The passes multiply a mesh's sizes: a mesh whose devices do not fit in
// int32 (here 2^62 x 4, which overflows int64) is refused, not wrapped.
// expected-error @+1 {{'tessera_graph.mesh' op has more than 2147483647 devices (the product of its axis sizes)}}
tessera_graph.mesh @huge axes = ["dp", "tp"] shape = [4611686018427387904, 4]

// -----

// expected-error @+1 {{'tessera_graph.mesh' op axis sizes must be positive}}
tessera_graph.mesh @empty axes = ["dp"] shape = [0]

// -----

// offset + (n - 1) * stride wrapped negative and passed; the run read far
// outside the input.
func.func @slice_stride_overflow(%a: tensor<7x33xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{reads past the input's 7 elements}}
  %r = tessera_graph.slice %a offsets = [0, 0] strides = [4611687117939015680, 1] : tensor<7x33xf32> -> tensor<3x1xf32>
  return %r : tensor<3x1xf32>
}

// -----

// 7 + 2 * INT64_MAX wrapped to 5 and the pad verified.
func.func @pad_overflow(%a: tensor<7x33xf32>) -> tensor<5x33xf32> {
  // expected-error @+1 {{padding of dim 0 makes it larger than 2^63 elements}}
  %r = tessera_graph.pad %a low = [9223372036854775807, 0] high = [9223372036854775807, 0] value = 1.0 : tensor<7x33xf32> -> tensor<5x33xf32>
  return %r : tensor<5x33xf32>
}
