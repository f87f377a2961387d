// Executables (vendor binaries) and the kernels inside them.
#include "runtime_impl.hpp"

namespace tessera {

using detail::MakeArgs;

namespace detail {

Status ExecutableImpl::Release() {
  if (!MarkDestroyed()) return Status::Ok();
  if (raw == nullptr) return Status::Ok();  // never fully created
  auto args = MakeArgs<TsExecutable_Destroy_Args>();
  args.executable = raw;
  released = raw;  // for "was destroyed" errors: the layer knows where
  raw = nullptr;
  return TESSERA_PLUGIN_CALL(device.impl()->lib(), Executable_Destroy, args);
}

ExecutableImpl::~ExecutableImpl() {
  Status st = Release();
  if (!st.ok())
    TESSERA_LOG(kWarning, "destroying an executable: " + st.ToString());
}

}  // namespace detail

bool Executable::valid() const { return impl_ && impl_->Alive(); }

StatusOr<Kernel> Executable::kernel(const std::string& name) const {
  TESSERA_CHECK_HANDLE(impl_, "Executable");
  auto args = MakeArgs<TsExecutable_GetKernel_Args>();
  args.executable = impl_->raw;
  args.name = name.c_str();
  Status st = TESSERA_PLUGIN_CALL_OUT(impl_->device.impl()->lib(),
                                      Executable_GetKernel, args, kernel);
  if (!st.ok()) return st;
  Kernel kernel;
  kernel.exe_ = impl_;
  kernel.kernel_ = args.kernel;
  kernel.name_ = name;
  kernel.info_.required_group_size = args.required_group_size;
  kernel.info_.num_buffer_args = args.num_buffer_args;
  kernel.info_.scalar_arg_bytes = args.scalar_arg_bytes;
  kernel.info_.static_shared_memory_bytes = args.static_shared_memory_bytes;
  kernel.info_.args_known = args.args_known != 0;
  return kernel;
}

Status Executable::destroy() {
  TESSERA_CHECK_HANDLE(impl_, "Executable");
  return impl_->Release();
}

// A kernel is valid while its executable lives (it keeps it alive).
bool Kernel::valid() const { return exe_ && exe_->Alive() && kernel_; }
const std::string& Kernel::name() const { return name_; }
TsKernel* Kernel::raw() const { return valid() ? kernel_ : nullptr; }

void Kernel::declare_buffer_access(const std::vector<uint32_t>& access) const {
  if (!valid()) return;
  if (detail::ValidationLayer* layer = exe_->device.impl()->lib().validation())
    layer->DescribeKernel(kernel_, access);
}

}  // namespace tessera
