// Recorded sweep points for the tune unit tests: a point from its repeats' rates, a one-node
// topology and the demand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/numa.hpp"
#include "tune/recommend.hpp"
#include "tune/sweep.hpp"

namespace ioprobe::test {

// A point with repeats `rates` (samples/s) and AU `au` for each run.
inline TunePoint pt(uint32_t w, uint32_t pf, std::vector<double> rates, double au = 0.5, std::string numa = "none",
                    double cpu = 1.0, bool steady = true) {
  TunePoint p;
  p.num_workers = w;
  p.prefetch_factor = pf;
  p.numa = numa;
  for (double r : rates) {
    TuneSample s;
    s.samples_per_s = r;
    s.bytes_per_s = r * 1e5;
    s.au = au;
    s.cpu_used = cpu;
    s.steady = steady;
    p.runs.push_back(s);
  }
  summarize_point(p);
  return p;
}

inline Topology one_node() {
  Topology t;
  t.nodes.resize(1);
  t.nodes[0].id = 0;
  t.nodes[0].cpus = {0, 1};
  return t;
}

inline RecommendInputs demand(double sps, uint32_t gpus = 1, int cpus = 2) {
  RecommendInputs in;
  in.required_samples_per_s = sps;
  in.au_target = 0.9;
  in.gpus = gpus;
  in.cpus_allowed = cpus;
  return in;
}

}  // namespace ioprobe::test
