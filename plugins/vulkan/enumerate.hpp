// Vulkan's two-call enumerations (count, then the array), bounded: the
// count is the driver's answer, and a count past what any driver has is
// refused rather than allocated (a lying or broken driver must not make the
// plugin allocate gigabytes or throw std::bad_alloc out of an entry point).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

namespace tessera::vk {

// More entries than any driver or loader lists (extensions, layers, queue
// families, physical devices).
constexpr uint32_t kMaxEnumerated = 4096;

// Calls `call(&count, nullptr)` then `call(&count, data)` and leaves the
// entries in *out.  False (and *out empty) when the first call fails or
// the count exceeds `limit`.  `call` returns VkResult or nothing (the
// queue-family query); VK_INCOMPLETE counts as success (a list that
// shrank between the calls; *out is cut to what the second call wrote).
template <class T, class Call>
bool enumerate_bounded(Call call, uint32_t limit, std::vector<T>* out, uint32_t* reported = nullptr) {
  out->clear();
  uint32_t n = 0;
  if constexpr (std::is_same_v<decltype(call(&n, static_cast<T*>(nullptr))), void>) {
    call(&n, static_cast<T*>(nullptr));
  } else {
    const VkResult r = call(&n, static_cast<T*>(nullptr));
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return false;
  }
  if (reported) *reported = n;
  if (n > limit) return false;
  out->resize(n);
  if (n == 0) return true;
  uint32_t got = n;
  if constexpr (std::is_same_v<decltype(call(&got, out->data())), void>) {
    call(&got, out->data());
  } else {
    const VkResult r = call(&got, out->data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
      out->clear();
      return false;
    }
  }
  if (got < n) out->resize(got);
  return true;
}

}  // namespace tessera::vk
