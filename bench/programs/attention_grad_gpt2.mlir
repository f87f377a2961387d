// GPT-2's attention backward: 12 causal heads of 256 queries, head dim 64,
// as one attention_grad returning dQ, dK^T and dV. Timing on a GPU backend
// (docs/autodiff.md, "Attention"):
//
//   TESSERA_BACKEND=vulkan tessera-run bench/programs/attention_grad_gpt2.mlir \
//       --schedule "attention=1" --no-check --iterations 3          # blockwise
//   ... --schedule "attention=1 attention-backward=0"               # composed
func.func @gpt2_attention_grad(%q: tensor<12x256x64xf32>, %kt: tensor<12x64x256xf32>, %v: tensor<12x256x64xf32>,
                               %o: tensor<12x256x64xf32>, %do: tensor<12x256x64xf32>)
    -> (tensor<12x256x64xf32>, tensor<12x64x256xf32>, tensor<12x256x64xf32>) {
  %dq, %dkt, %dv = tessera_graph.attention_grad %q, %kt, %v, %o, %do scale = 0.125 causal
      : tensor<12x256x64xf32>, tensor<12x64x256xf32>, tensor<12x256x64xf32>, tensor<12x256x64xf32>, tensor<12x256x64xf32>
  return %dq, %dkt, %dv : tensor<12x256x64xf32>, tensor<12x64x256xf32>, tensor<12x256x64xf32>
}
