//===- GraphToSchedule.h - parts of --tessera-graph-to-schedule -*- C++ -*-===//
#ifndef TESSERA_LIB_DIALECT_GRAPH_TRANSFORMS_GRAPHTOSCHEDULE_H
#define TESSERA_LIB_DIALECT_GRAPH_TRANSFORMS_GRAPHTOSCHEDULE_H

#include "tessera/Dialect/Graph/Transforms/Passes.h"

namespace tessera::graph {

/// Replaces the attention chain ending in `sm`'s consumer by a
/// tessera_schedule.flash_attention when it has the supported form; leaves
/// the IR as it is otherwise (AttentionToSchedule.cpp).
void matchAttention(SoftmaxOp sm, int64_t attnBlockQ, int64_t attnBlockKV);

}  // namespace tessera::graph

#endif
