// Isolation: a plugin file is first opened in a probe process
// (tessera-plugin-probe, next to libtessera_core.so in <libdir>/tessera/),
// which loads it, creates a client, lists its devices and unloads it,
// reporting each step on a pipe.  Only a plugin whose probe ended normally
// is then loaded into this process; one that crashed, aborted, called exit()
// or hung in its probe is rejected with the step and what happened, and the
// other backends are unaffected.  docs/runtime.md ("Isolation") says why
// this mechanism and what it costs.
//
// The embedded (static) cpu plugin is part of the program: never probed.
// Verdicts are remembered per process, keyed by the file's identity (device,
// inode, size, mtime), the options and the environment, so tessera-info's
// ProbeAll and its Runtime::Create probe each file once.
//
// Thread-safety: every function may be called from any thread.
#ifndef TESSERA_CORE_PLUGIN_PROBE_HPP_
#define TESSERA_CORE_PLUGIN_PROBE_HPP_

#include <string>
#include <vector>

#include "tessera/runtime.hpp"

namespace tessera::detail {

// The steps of opening a plugin, in order; a probe that ends early names the
// last step it began.
enum class ProbeStep {
  kLoad,          // dlopen: the plugin's library constructors run
  kEntryPoint,    // tessera_plugin_get_api()
  kGetInfo,       // Plugin_GetInfo, Compiler_GetTargets
  kClientCreate,  // Client_Create
  kDevices,       // Client_GetDevices, Device_GetProperties
  kClientDestroy, // Client_Destroy
  kUnload,        // dlclose: its destructors run
};
const char* ProbeStepName(ProbeStep step);

// Tells the probe process's parent which step begins.  A no-op (one load of
// a null pointer) outside the probe helper.
void NoteProbeStep(ProbeStep step);
// Set by the probe helper only: where NoteProbeStep reports.
void SetProbeStepObserver(void (*observer)(ProbeStep));

struct ProbeVerdict {
  bool survived = true;
  ProbeStep step = ProbeStep::kLoad;  // where it failed, when it did not
  std::string reason;                 // names the file and what happened
  // The probe got through, but opening the backend failed cleanly ("no
  // driver", bad options, no device): what OpenBackend said, so that this
  // process need not create (and initialise the driver of) a client that
  // will not be used.  (The caller has loaded the plugin itself by then.)
  bool open_failed = false;
  PluginState open_state = PluginState::kUnavailable;
  StatusCode open_code = StatusCode::kUnavailable;
  std::string open_reason;   // the candidate's reason
  std::string open_message;  // the Status message
};

// The verdict on candidate.path (a file, not the embedded plugin) with these
// options: probes it unless this process already has a verdict.  Isolation
// off (RuntimeOptions::isolate_plugins, TESSERA_PLUGIN_ISOLATION=off) or a
// missing helper: every plugin survives (the latter with a warning).
ProbeVerdict ProbePluginFile(const PluginCandidate& candidate, const RuntimeOptions& options);

// ProbePluginFile for each candidate file at once (a thread each), so that
// selection and tessera-info wait for the slowest probe, not for their sum;
// the verdicts are then remembered.  Embedded and shadowed candidates, and
// paths that are no file, are skipped.
void ProbePluginFiles(const std::vector<const PluginCandidate*>& candidates,
                      const RuntimeOptions& options);

// "" when `path` may be handed to dlopen; otherwise why not (a FIFO would
// block dlopen's open(), a folder or a device is no shared object).
std::string NotAPluginFileReason(const std::string& path);

}  // namespace tessera::detail

#endif  // TESSERA_CORE_PLUGIN_PROBE_HPP_
