#include "cluster/comm_step_sync.hpp"

#include <cstdio>
#include <exception>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/message.hpp"

namespace ioprobe::cluster {

void CommStepSync::start() {
  comm_.barrier("start of the run", timeout_s_);
  const int64_t t0 = now_ns();
  comm_.barrier("start of the run (skew)", timeout_s_);
  started_ns_ = now_ns();
  skew_s_ = static_cast<double>(started_ns_ - t0) / 1e9;
}

bool CommStepSync::round(StopKind& kind, bool stepping) noexcept {
  int64_t v[2] = {static_cast<int64_t>(kind), stepping ? 1 : 0};
  const int64_t t0 = now_ns();
  try {
    comm_.allreduce_max(v, 2, "DDP step", timeout_s_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%serror: rank %d (%s): %s\n", message_prefix().c_str(), comm_.rank(),
                 comm_.hostname().c_str(), e.what());
    comm_.abort(kExitFailure);
  }
  ++rounds_;
  exchange_ns_ += now_ns() - t0;
  kind = static_cast<StopKind>(v[0]);
  return v[1] != 0;
}

StopKind CommStepSync::exchange(StopKind local) noexcept {
  StopKind k = local;
  round(k, true);
  return k;
}

void CommStepSync::finish(StopKind local) noexcept {
  if (stonewall_ && local == StopKind::kNone) local = StopKind::kStonewall;
  StopKind k = local;
  const int64_t t0 = now_ns();
  while (round(k, false)) k = local;
  finish_ns_ += now_ns() - t0;
}

}  // namespace ioprobe::cluster
