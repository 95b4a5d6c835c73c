// Adapters of the coordinator's upstream interfaces over the PD client.
// Thread-safe like PdClient; the client is not owned and must outlive them.
#pragma once

#include "coordinator/gc_manager.h"
#include "coordinator/interfaces.h"
#include "pd/pd_client.h"

namespace sluice::coordinator {

class PdTsoSource final : public TsoSource {
 public:
  explicit PdTsoSource(pd::PdClient* client) : client_(client) {}
  Result<Ts> GetTs() override { return client_->GetTs(); }

 private:
  pd::PdClient* const client_;
};

class PdGcSafepointUpdater final : public GcSafepointUpdater {
 public:
  explicit PdGcSafepointUpdater(pd::PdClient* client) : client_(client) {}
  Result<Ts> UpdateServiceGcSafepoint(const std::string& service_id, int64_t ttl_seconds,
                                      Ts safepoint) override {
    return client_->UpdateServiceGcSafePoint(service_id, ttl_seconds, safepoint);
  }
  Result<Ts> GetGcSafepoint() override { return client_->GetGcSafePoint(); }

 private:
  pd::PdClient* const client_;
};

}  // namespace sluice::coordinator
