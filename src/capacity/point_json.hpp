// The one JSON codec of a capacity point (capacity/search.hpp CapacityPoint and its host rows):
// the "capacity" document writes each point with it (report/capacity_document.hpp adds the
// figures derived from the search's settings and the devices' accounting), and rank 0 hands each
// point to the other processes of a multi-host search with it (cli/capacity_cluster.cpp).
//
// Point: {gpus, au, au_min (fractions 0..1), samples_per_s, bytes_per_s (B/s), repeats, spread,
//         cpu_fraction, consumer_lag, worker_runq_share (null: not measured), client_bound,
//         workers_bound, metadata_bound, steady, delivered_bytes, note; across hosts: hosts [row...]
//         and client_host (null: no host was client-bound); with --decode jpeg:
//         decode_us_per_sample (µs, written when > 0)}
// Host row: {hostname, host_index, mpi_ranks, gpus, cpus_allowed, au, au_min, samples_per_s,
//            bytes_per_s, delivered_bytes, cpu_fraction, consumer_lag, client_bound, note}
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "capacity/search.hpp"

namespace ioprobe {

/// The object above. Never throws.
nlohmann::json capacity_point_json(const CapacityPoint& p);

/// A point read back strictly: a missing or mistyped field throws UsageError naming its path
/// under `where` ("'a.json'.capacity.points[2].au: ..."). Keys other than the point's (the
/// document's derived figures) are left to the caller.
CapacityPoint capacity_point_from_json(const nlohmann::json& j, const std::string& where);

/// nlohmann's hooks (`nlohmann::json j = p;`, `j.get<CapacityPoint>()`), the functions above
/// with the path "capacity point".
void to_json(nlohmann::json& j, const CapacityPoint& p);
void from_json(const nlohmann::json& j, CapacityPoint& p);

}  // namespace ioprobe
