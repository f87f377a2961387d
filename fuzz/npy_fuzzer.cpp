// The .npy reader of tessera-run (tools/tessera-run/npy.cpp, ReadNpy): the
// input is the file.  What it accepts is written back with WriteNpy and
// must read back the same (dtype, shape, bytes).
#include <string>

#include "fuzz_util.hpp"
#include "npy.hpp"
#include "tessera/element_types.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tessera::fuzz::ScratchFile in(".npy"), out(".out.npy");
  tessera::run::NpyArray array;
  if (!tessera::run::ReadNpy(in.Write(data, size), &array).empty()) return 0;
  // What is accepted holds exactly shape x element size bytes (a wrapped
  // byte count once let a 2^62-element header through with no data).
  unsigned __int128 want = tessera::elements::DtypeSize(array.dtype);
  for (int64_t d : array.shape) want *= static_cast<uint64_t>(d);
  if (want != array.bytes.size())
    tessera::fuzz::Fail("ReadNpy accepted " + std::to_string(array.bytes.size()) +
                        " bytes for a shape that needs more or fewer");
  if (std::string why = tessera::run::WriteNpy(out.path(), array); !why.empty())
    tessera::fuzz::Fail("WriteNpy of what ReadNpy accepted: " + why);
  tessera::run::NpyArray again;
  if (std::string why = tessera::run::ReadNpy(out.path(), &again); !why.empty())
    tessera::fuzz::Fail("a written .npy does not read back: " + why);
  if (again.dtype != array.dtype || again.shape != array.shape || again.bytes != array.bytes)
    tessera::fuzz::Fail(".npy round trip changed the array (dtype " + array.dtype + " -> " + again.dtype + ")");
  return 0;
}
