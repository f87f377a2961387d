// The test areas of the conformance suite, in the order they run.
//
// Each area is one GoogleTest suite (areas/<name>_test.cpp) whose fixture is
// named `suite`, so `--gtest_filter=<suite>.*` selects exactly that area.
#ifndef TESSERA_CONFORMANCE_AREAS_HPP_
#define TESSERA_CONFORMANCE_AREAS_HPP_

#include <string>
#include <vector>

namespace tessera::cts {

struct Area {
  const char* name;   // command line and report: "memory"
  const char* suite;  // GoogleTest suite: "Memory"
  // Part of the Core certification level (docs/conformance.md).
  bool core;
  // The optional level this area unlocks ("Graphs", ...); nullptr for core.
  const char* level;
  // Runs with several devices when the plugin can expose them (the runner
  // gives the cpu plugin a default of 4 devices: option "devices").
  bool multi_device;
  const char* summary;  // one line, for --list-areas and the report
};

inline const std::vector<Area>& AllAreas() {
  static const std::vector<Area> areas = {
      {"device", "Device", true, nullptr, true,
       "devices enumerate; capabilities are consistent"},
      {"memory", "Memory", true, nullptr, false,
       "every buffer kind; sizes 0, 1, odd, large; alignment; OOM is an error"},
      {"copies", "Copies", true, nullptr, true,
       "every direction sync and async; offsets; overlap; pinned rules; peer"},
      {"streams", "Streams", true, nullptr, false,
       "order; concurrency; default-stream sequencing; weights"},
      {"events", "Events", true, nullptr, false,
       "record, wait, query, synchronize, elapsed, never recorded, re-record, timestamps"},
      {"graphs", "Graphs", false, "Graphs", false,
       "capture across streams with event edges; replay == eager; many replays"},
      {"hints", "Hints", false, "Hints", false,
       "prefetch/advise never change results; report matches capabilities"},
      {"compiler", "Compiler", false, "Kernels", false,
       "compile targets; Tile IR compiled for the device runs; bad requests are errors"},
      {"kernels", "Kernels", false, "Kernels", true,
       "saxpy, shared-memory reduction, atomics per scope, shuffle, GEMM, softmax"},
      {"layouts", "Layouts", false, "Kernels", false,
       "row/col major, blocked, tiled, interleaved: exact round trips"},
      {"collectives", "Collectives", false, "Collectives", true,
       "all_reduce, broadcast, all_gather, reduce_scatter over 1..N devices"},
      {"errors", "Errors", true, nullptr, true,
       "every bad argument is an error with a message, never a crash"},
      {"threads", "Threads", true, nullptr, false,
       "8 threads on shared and private streams: no lost work, no deadlock"},
      {"validation", "Validation", true, nullptr, false,
       "TESSERA_VALIDATE's layer over the plugin: misuse reported, ordered work not"},
      {"abi", "Abi", true, nullptr, true,
       "every ABI entry point refuses each invalid argument with its documented code"},
      {"transfers", "Transfers", true, nullptr, false,
       "copies and memsets over every kind x size (0, 1, odd, 3 MiB) x offset"},
      {"allocations", "Allocations", true, nullptr, false,
       "Buffer_Allocate over every kind x size x alignment: aligned, usable"},
      {"launches", "Launches", true, nullptr, false,
       "fill_u32 and saxpy over element counts x group sizes x offsets"},
      {"datatypes", "DataTypes", false, "Collectives", true,
       "every collective x data type x reduce op x count, exact"},
  };
  return areas;
}

inline const Area* FindArea(const std::string& name) {
  for (const Area& a : AllAreas())
    if (name == a.name) return &a;
  return nullptr;
}

}  // namespace tessera::cts

#endif  // TESSERA_CONFORMANCE_AREAS_HPP_
