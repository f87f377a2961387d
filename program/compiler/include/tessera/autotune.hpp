// Autotuning the Schedule IR tile parameters of a program (docs/autotune.md).
//
//   #include <tessera/autotune.hpp>   // link Tessera::compiler
//   tessera::AutotuneOptions o;
//   o.space = {{"tile-m", {"96", "144", "192"}}, {"micro-m", {"4", "6"}}};
//   o.max_trials = 16;
//   auto best = tessera::Autotune(device, tessera::ProgramSource::File("mlp.mlir"), {}, o);
//   // best->schedule: "tile-m=192 micro-m=4", best->time_ms its median time
//
// Each trial compiles the program with one point of the space as its
// --tessera-graph-to-schedule options (ProgramCompileOptions::schedule),
// runs it `warmup` times untimed and `repeats` times timed on `device`
// (each run synchronized), and scores it by the median.  The target's own
// schedule (no options) is always the first trial; the others follow the
// strategy (coordinate descent, or random points) until max_trials or
// max_seconds is reached; then the best few and the default are timed again
// in turns (`confirm`).  The winner is written to the autotune cache
// (<TESSERA_CACHE_DIR>/autotune/<key>.tat), keyed by the device (name,
// driver and API versions), the plugin (name, version, compiler build), the target,
// the program's text (its shapes with it), the function and the compiler
// options: a later CompileProgram / CompileProgramImage of the same program
// for the same device without an explicit schedule uses the tuned one
// (TESSERA_LOG=debug says so, with the lookup's time).  TESSERA_AUTOTUNE=off
// turns that reuse off.
//
// Thread-safety: as CompileProgram; trials run one after another.
#ifndef TESSERA_AUTOTUNE_HPP_
#define TESSERA_AUTOTUNE_HPP_

#include <string>
#include <utility>
#include <vector>

#include "tessera/program_compiler.hpp"

namespace tessera {

// A search space: a --tessera-graph-to-schedule key ("tile-m") and the
// values to try ("96", "144").
using AutotuneSpace = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct AutotuneOptions {
  AutotuneSpace space;       // empty: DefaultAutotuneSpace(target)
  int max_trials = 24;       // trials, the default schedule's included (>= 1)
  double max_seconds = 120;  // no new trial starts after this (<= 0: no limit)
  int repeats = 5;           // timed runs per trial; the median scores it
  int warmup = 1;            // untimed runs per trial before them
  // "coordinate": from the default, each key in turn takes each of its
  // values with the others at the best so far, in passes while one
  // improves; "random": points of the space in a seeded order.
  std::string strategy = "coordinate";
  unsigned seed = 1;         // order of the random trials
  // The best `confirm` schedules and the default are timed again in turns
  // (`repeats` rounds of one run each), and these medians decide: a change
  // of load between two trials does not.  0: the trials' medians decide.
  int confirm = 3;
  // A schedule replaces the default only when its median is faster by
  // this fraction (0.05: 5%); smaller gains are taken for noise (a shared
  // machine's run-to-run spread is several percent).
  double min_gain = 0.05;
  bool use_cache = true;     // answer from the cache when it has this program
  bool write_cache = true;   // record the winner
};

struct AutotuneTrial {
  std::string schedule;  // "" : the target's default
  double time_ms = 0;    // median; < 0 when the trial failed
  std::string error;     // why it failed (a schedule the compiler rejects)
  // Compiled to the same kernels as the schedule `same_as` measured before
  // (this one's options changed nothing): its time, not measured again.
  bool duplicate = false;
  std::string same_as;
};

struct AutotuneResult {
  std::string schedule;         // the best ("" when the default won)
  double time_ms = 0;           // its median time per run
  double default_ms = 0;        // the default schedule's (0 from the cache)
  // (both from the confirmation rounds when there were some, else from
  // the trials)
  double search_seconds = 0;    // wall time of the search
  bool from_cache = false;      // answered by the cache, nothing measured
  double lookup_ms = 0;         // the cache lookup's time
  std::string cache_file;       // the entry read or written ("" without a cache)
  std::vector<AutotuneTrial> trials;
};

// The keys and values searched when AutotuneOptions::space is empty, for
// `target` whose plugin schedules it with `target_schedule`
// (CompileTargetInfo::schedule: the cpu's register tiles depend on it).
AutotuneSpace DefaultAutotuneSpace(const std::string& target, const std::string& target_schedule = "");

// Parses "tile-m=96,144,192 micro-m=4,6" into a space.
StatusOr<AutotuneSpace> ParseAutotuneSpace(const std::string& text);

// Searches the program's schedule on `device` (a program
// without a mesh; options.schedule must be empty: it is what is searched).
StatusOr<AutotuneResult> Autotune(const Device& device, const ProgramSource& source,
                                  const ProgramCompileOptions& options = {},
                                  const AutotuneOptions& autotune = {});
// The same for an SPMD program: each trial runs on the first
// ProgramDevicesNeeded() of `devices` (one per mesh position, as
// CompileProgram takes them), every device on its own stream, with local
// inputs on each; the time is the whole step's, all streams synchronized.
// The choice is cached under devices[0], which the compile of an SPMD
// program is specialised for.  One device: as above.
StatusOr<AutotuneResult> Autotune(const std::vector<Device>& devices, const ProgramSource& source,
                                  const ProgramCompileOptions& options = {},
                                  const AutotuneOptions& autotune = {});

// The cached choice for this program on `device`, without measuring:
// NOT_FOUND when there is none (or it is unusable: a warning says why).
StatusOr<AutotuneResult> LookupAutotuneCache(const Device& device, const ProgramSource& source,
                                             const ProgramCompileOptions& options = {});

}  // namespace tessera

#endif  // TESSERA_AUTOTUNE_HPP_
