//===- NarrowIntegerLiterals.cpp - 8/16-bit constant literals made valid --===//
#include "NarrowIntegerLiterals.h"

#include "llvm/ADT/DenseMap.h"

namespace tessera::spv {

namespace {
constexpr uint32_t kHeaderWords = 5;
constexpr uint32_t kOpTypeInt = 21;
constexpr uint32_t kOpConstant = 43;
constexpr uint32_t kOpSpecConstant = 50;
}  // namespace

void fixNarrowIntegerLiterals(llvm::SmallVectorImpl<uint32_t> &words) {
  // Result id -> (width, signedness) of the narrow integer types; types
  // are declared before the constants that use them.
  llvm::DenseMap<uint32_t, std::pair<uint32_t, uint32_t>> narrow;
  for (size_t at = kHeaderWords; at < words.size();) {
    const uint32_t count = words[at] >> 16, opcode = words[at] & 0xffff;
    if (count == 0 || at + count > words.size()) return;  // not well formed: leave it
    if (opcode == kOpTypeInt && count == 4 && words[at + 2] < 32) {
      narrow[words[at + 1]] = {words[at + 2], words[at + 3]};
    } else if ((opcode == kOpConstant || opcode == kOpSpecConstant) && count == 4) {
      auto it = narrow.find(words[at + 1]);
      if (it != narrow.end()) {
        const auto [width, isSigned] = it->second;
        const uint32_t mask = (1u << width) - 1;
        uint32_t v = words[at + 3] & mask;
        if (isSigned && (v >> (width - 1)) != 0) v |= ~mask;
        words[at + 3] = v;
      }
    }
    at += count;
  }
}

}  // namespace tessera::spv
