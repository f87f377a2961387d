# lit configuration shared by every lit suite (tessera_add_lit_suite):
# ir/test, plugins/<name>/test.
import os
import lit.formats


config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir"]
config.test_source_root = config.tessera_test_src
# Outputs (Output/*.script) go to the build tree, never the source tree.
config.test_exec_root = config.tessera_test_exec
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.environment["PATH"] = os.pathsep.join(
    [config.tessera_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# Sanitizer runs (scripts/sanitize.sh) pin libraries through a preloaded
# shim that reads this variable; lit passes LD_PRELOAD but not it.
for var in ("TESSERA_PIN_LIBRARY",):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# The CUDA toolkit's ptxas, searched where the cuda compiler searches
# ($CUDA_HOME/bin, /usr/local/cuda/bin, PATH): tests that read `ptxas -v`
# say `REQUIRES: ptxas` and call it as %ptxas.
import shutil
_dirs = ([os.path.join(os.environ["CUDA_HOME"], "bin")] if os.environ.get("CUDA_HOME") else []) + ["/usr/local/cuda/bin"]
_ptxas = next((os.path.join(d, "ptxas") for d in _dirs if os.access(os.path.join(d, "ptxas"), os.X_OK)),
              shutil.which("ptxas"))
if _ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
