#include "node/node.h"

namespace sluice::node {

Result<std::unique_ptr<Node>> Node::Create(NodeOptions options) {
  if (options.self.value().empty() || !options.lookup) {
    return InvalidArgument("node: an id and a changefeed lookup are required");
  }
  if (options.deps.pd == nullptr || options.deps.cache == nullptr ||
      options.deps.puller == nullptr) {
    return InvalidArgument("node: pd, region cache and puller are required");
  }
  std::unique_ptr<Node> node(new Node(std::move(options)));
  Status s = node->Init();
  if (!s.ok()) {
    node->Stop();
    return s;
  }
  return node;
}

Node::~Node() { Stop(); }

Status Node::Init() {
  registry_ = std::make_unique<PathRegistry>(options_.deps);
  provider_ = std::make_unique<PathFactoryProvider>(registry_.get(), options_.lookup);
  orchestrator_ = std::make_unique<dispatchermanager::DispatcherOrchestrator>(provider_.get());
  messaging::MessageCenterOptions center_options;
  center_options.self = options_.self;
  center_options.clock = options_.clock;
  center_options.transport = options_.transport;
  center_ = std::make_unique<messaging::MessageCenterImpl>(center_options);
  RETURN_IF_ERROR(center_->Start());
  NodeControlOptions control_options;
  control_options.center = center_.get();
  control_options.orchestrator = orchestrator_.get();
  control_options.registry = registry_.get();
  control_options.clock = options_.clock;
  control_ = std::make_unique<NodeControl>(control_options);
  MaintainerHostOptions host_options;
  host_options.self = options_.self;
  host_options.center = center_.get();
  host_options.clock = options_.clock;
  host_options.registry = registry_.get();
  host_options.orchestrator = orchestrator_.get();
  host_options.alive_nodes = options_.alive_nodes;
  host_ = std::make_unique<MaintainerHost>(host_options);
  NodeControl* control = control_.get();
  registry_->SetBlockStatusListener(
      [control](const std::string& cf, const dispatcher::BlockStatus& s) {
        control->OnBlockStatus(cf, s);
      });
  return Status::Ok();
}

Status Node::StartControl() {
  if (control_started_) return Status::Ok();
  RETURN_IF_ERROR(control_->Start());
  control_started_ = true;
  return Status::Ok();
}

Status Node::Start(coordinator::MaintainerStatusListener* statuses) {
  host_->SetStatusListener(statuses);
  RETURN_IF_ERROR(host_->Start());
  return StartControl();
}

void Node::LocalFence() {
  MutexLock lock(&parts_mu_);
  if (host_ != nullptr) host_->Fence();
  if (orchestrator_ != nullptr) orchestrator_->LocalFence();
}

void Node::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // The maintainers report their checkpoints a last time.
  if (control_ != nullptr) control_->Stop();
  if (host_ != nullptr) host_->Stop();
  if (center_ != nullptr) center_->Stop();
  if (provider_ != nullptr) provider_->Shutdown();
  // Dropping the managers closes the dispatchers, then each data path
  // flushes and closes its sink.
  MutexLock lock(&parts_mu_);
  orchestrator_.reset();
  control_.reset();
  host_.reset();
  center_.reset();
  registry_.reset();
  provider_.reset();
}

}  // namespace sluice::node
