#include "raw/raw_results.hpp"

#include <algorithm>

namespace ioprobe {

void RawResults::merge(const RawResults& o) {
  ios += o.ios;
  bytes += o.bytes;
  errors += o.errors;
  cpu_user_s += o.cpu_user_s;
  cpu_sys_s += o.cpu_sys_s;
  latency.merge(o.latency);
  elapsed_s = std::max(elapsed_s, o.elapsed_s);
  if (first_error.empty()) first_error = o.first_error;  // ErrorRecord::empty()
  if (stop.kind == RawStopKind::kNone || (o.partial && !partial)) stop = o.stop;
  partial = partial || o.partial;
}

}  // namespace ioprobe
