// Recorded sweep points for the tune unit tests: a point from its repeats' rates, a one-node
// topology and the demand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/tune_document.hpp"
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

// A tune document of `points` and `rec` on a 2-CPU host, against a demand of `required`
// samples/s at AU 90 %, with only what the renderers read filled in.
inline TuneDocument tune_doc(const std::vector<TunePoint>& points, const Recommendation& rec, double required,
                             const TuneStop& stop = {}, uint32_t repeats = 1) {
  TuneDocument d;
  d.header.ioprobe_version = "0.1.0";
  d.header.command = {"ioprobe", "tune"};
  d.header.host = {.cpus_online = 2, .cpus_allowed = 2, .cpu_list = "0-1"};
  d.target.path = "/mnt/x";
  d.target.fs_type = "ext4";
  d.target.reading = TargetReadSetting{.direct = true};
  d.dataset.files = 100;
  d.dataset.bytes = 1000;
  d.demand.demand.gpus = 1;
  d.demand.demand.au_target = 0.9;
  d.demand.required_samples_per_s = required;
  d.tune.repeats = repeats;
  d.tune.run_s = 2.0;
  d.tune.stop = stop;
  d.points = tune_point_entries(points);
  d.recommendation = rec;
  return d;
}

}  // namespace ioprobe::test
