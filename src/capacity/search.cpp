#include "capacity/search.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace ioprobe {

bool point_passes(const CapacityPoint& p, double au_target) { return p.au >= au_target && p.samples_per_s > 0; }

CapacityAnswer search_capacity(const MeasurePointFn& measure, const CapacitySearchOptions& o) {
  CapacityAnswer a;
  std::map<uint32_t, CapacityPoint> seen;
  const uint32_t cap = std::max<uint32_t>(1, o.max_gpus);
  auto run = [&](uint32_t g) -> const CapacityPoint* {
    std::optional<CapacityPoint> p = measure(g);
    if (!p) return nullptr;
    p->gpus = g;
    return &(seen[g] = *p);
  };

  uint32_t lo = 0;  // largest passing count (0: none yet)
  uint32_t hi = 0;  // smallest failing count (0: none yet)
  bool out_of_time = false;
  // Doubling.
  for (uint32_t g = 1;; g = std::min<uint64_t>(cap, uint64_t{g} * 2)) {
    const CapacityPoint* p = run(g);
    if (!p) {
      out_of_time = true;
      break;
    }
    if (!point_passes(*p, o.au_target)) {
      hi = g;
      break;
    }
    lo = g;
    if (g == cap) break;
  }
  // Bisection.
  while (!out_of_time && hi && hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const CapacityPoint* p = run(mid);
    if (!p) {
      out_of_time = true;
      break;
    }
    if (point_passes(*p, o.au_target)) lo = mid;
    else hi = mid;
  }

  for (auto& [g, p] : seen) a.points.push_back(p);
  a.gpus_fed = lo;
  a.boundary_measured = hi && hi == lo + 1;
  const CapacityPoint* fail = hi ? &seen[hi] : nullptr;
  if (a.boundary_measured && fail->client_bound) {
    a.bound = "client-cpu";
    const std::string where = fail->client_host.empty() ? "" : " on host " + fail->client_host;
    a.text = lo == 0
                 ? fmt::format("client-bound{}: this client could not emulate even 1 accelerator at its rate ({}); "
                               "use a client with more CPUs, or more hosts; the storage was not the limit "
                               "measured here",
                               where, fail->note)
                 : fmt::format("client-bound{} at {}: add hosts (at {} the client limited the run: {}); the storage "
                               "was not the limit measured here",
                               where, lo, hi, fail->note);
  } else if (a.boundary_measured && fail->workers_bound) {
    a.bound = "workers";
    a.text = fmt::format("worker-bound at {}: more num_workers (--workers) or cheaper per-sample work would feed more "
                         "(at {} {}); the storage was not the limit measured here",
                         lo, hi, fail->note);
  } else if (a.boundary_measured) {
    a.bound = fail->metadata_bound ? "metadata" : "storage";
    a.text = lo == 0 ? fmt::format("the storage feeds no accelerator at AU >= {:.0f}%: 1 reached AU {:.1f}%{}",
                                   o.au_target * 100, fail->au * 100,
                                   fail->metadata_bound ? " (metadata-bound: " + fail->note + ")" : "")
                     : fmt::format("{} fed ({}-bound): {} reached AU {:.1f}%, {} reached AU {:.1f}% < {:.0f}%", lo,
                                   a.bound, lo, seen[lo].au * 100, hi, fail->au * 100, o.au_target * 100);
  } else if (!out_of_time && !hi) {
    a.bound = "limit";
    a.text = fmt::format("at least {} fed: every count up to the search's limit of {} passed; raise the limit to "
                         "find the boundary",
                         lo, cap);
  } else if (o.interrupted && o.interrupted()) {
    a.bound = "interrupted";
    const std::string next = hi ? fmt::format("the count between {} (passed) and {} (failed)", lo, hi)
                                : fmt::format("a count above {}", lo);
    a.text = a.points.empty() ? "interrupted before any count was measured; run the search again for an answer"
                              : fmt::format("at least {} fed; the search was interrupted before {} was measured; "
                                            "run it again for the boundary",
                                            lo, next);
  } else {
    a.bound = "budget";
    a.text = fmt::format("at least {} fed; the budget ran out before {} was measured{}", lo,
                         hi ? fmt::format("the count between {} (passed) and {} (failed)", lo, hi)
                            : fmt::format("a count above {}", lo),
                         "; give the search more time or shorter points");
  }
  // The answer N passed, but with the client already at its limit (the table's "fed
  // (client-bound)"): the summary says so too, so N reads as this client's count, not the storage's.
  if (lo > 0 && a.bound != "client-cpu" && seen[lo].client_bound) {
    const CapacityPoint& n = seen[lo];
    a.text += fmt::format("; at {} the client was already the limit{} (the note at {}): {} is this client's count, "
                          "not necessarily the storage's; add hosts to measure more",
                          lo, n.client_host.empty() ? "" : " on host " + n.client_host, lo, lo);
  }
  return a;
}

}  // namespace ioprobe
