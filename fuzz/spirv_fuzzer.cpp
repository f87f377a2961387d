// SPIR-V reflection of the vulkan plugin (plugins/vulkan/spirv.cpp,
// spirv::Reflect), on what Executable_Load gives it: the input is one
// module, or a kernel archive of modules ("archive:spirv",
// tessera/kernel_archive.hpp), each reflected as load_image does
// (plugins/vulkan/executable.cpp).  No device is needed.
#include <cstring>
#include <string>
#include <vector>

#include "spirv.hpp"
#include "tessera/kernel_archive.hpp"

namespace {

void ReflectModule(const char* data, size_t size) {
  // load_image: a whole number of words, copied into aligned storage.
  if (size == 0 || size % 4 != 0) return;
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), data, size);
  tessera::vk::spirv::Module m;
  std::string why;
  if (!tessera::vk::spirv::Reflect(words.data(), words.size(), &m, &why)) return;
  for (uint32_t cap : m.capabilities) (void)tessera::vk::spirv::CapabilityName(cap);
  // What build_kernel reads of it.
  for (const auto& e : m.entries) {
    const uint32_t* local = m.has_workgroup_size_constant ? m.workgroup_size : e.local;
    volatile uint64_t threads = uint64_t{local[0]} * local[1] * local[2];
    (void)threads;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (tessera::IsKernelArchive(data, size)) {
    std::vector<tessera::ArchiveEntry> entries;
    if (!tessera::ReadKernelArchive(data, size, &entries).empty()) return 0;
    for (const auto& e : entries) ReflectModule(e.data.data(), e.data.size());
    return 0;
  }
  // Whole words only, as load_image demands; the tail is dropped so that
  // the fuzzer need not learn it.
  ReflectModule(reinterpret_cast<const char*>(data), size / 4 * 4);
  return 0;
}
