// Graphs: what stream capture recorded, and its instantiated form.
#include "runtime_impl.hpp"

namespace tessera {

using detail::MakeArgs;

namespace detail {

Status GraphImpl::Release() {
  if (!MarkDestroyed()) return Status::Ok();
  if (raw == nullptr) return Status::Ok();  // never fully created
  auto args = MakeArgs<TsGraph_Destroy_Args>();
  args.graph = raw;
  released = raw;  // for "was destroyed" errors: the layer knows where
  raw = nullptr;
  return TESSERA_PLUGIN_CALL(device.impl()->lib(), Graph_Destroy, args);
}

GraphImpl::~GraphImpl() {
  Status st = Release();
  if (!st.ok()) TESSERA_LOG(kWarning, "destroying a graph: " + st.ToString());
}

Status GraphExecImpl::Release() {
  if (!MarkDestroyed()) return Status::Ok();
  if (raw == nullptr) return Status::Ok();  // never fully created
  auto args = MakeArgs<TsGraphExec_Destroy_Args>();
  args.exec = raw;
  released = raw;  // for "was destroyed" errors: the layer knows where
  raw = nullptr;
  return TESSERA_PLUGIN_CALL(device.impl()->lib(), GraphExec_Destroy, args);
}

GraphExecImpl::~GraphExecImpl() {
  Status st = Release();
  if (!st.ok())
    TESSERA_LOG(kWarning, "destroying a graph exec: " + st.ToString());
}

}  // namespace detail

bool Graph::valid() const { return impl_ && impl_->Alive(); }

size_t Graph::num_nodes() const {
  if (!valid()) return 0;
  auto args = MakeArgs<TsGraph_GetInfo_Args>();
  args.graph = impl_->raw;
  if (!TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Graph_GetInfo, args).ok())
    return 0;
  return args.num_nodes;
}

size_t Graph::num_edges() const {
  if (!valid()) return 0;
  auto args = MakeArgs<TsGraph_GetInfo_Args>();
  args.graph = impl_->raw;
  if (!TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Graph_GetInfo, args).ok())
    return 0;
  return args.num_edges;
}

StatusOr<GraphExec> Graph::instantiate() const {
  TESSERA_CHECK_HANDLE(impl_, "Graph");
  auto args = MakeArgs<TsGraph_Instantiate_Args>();
  args.graph = impl_->raw;
  TESSERA_RETURN_IF_ERROR(TESSERA_PLUGIN_CALL_OUT(impl_->device.impl()->lib(),
                                                  Graph_Instantiate, args, exec));
  auto exec = std::make_shared<detail::GraphExecImpl>();
  exec->device = impl_->device;
  exec->raw = args.exec;
  return GraphExec(std::move(exec));
}

Status Graph::destroy() {
  TESSERA_CHECK_HANDLE(impl_, "Graph");
  return impl_->Release();
}

bool GraphExec::valid() const { return impl_ && impl_->Alive(); }
TsGraphExec* GraphExec::raw() const { return valid() ? impl_->raw : nullptr; }

Status GraphExec::destroy() {
  TESSERA_CHECK_HANDLE(impl_, "GraphExec");
  return impl_->Release();
}

}  // namespace tessera
