// One process's typed part of a multi-host job, sent to rank 0 and read back there: the one way
// every command gathers its results (IOR's rank-0 reduce: rank 0 alone merges and prints).
//
// A Part needs nlohmann's hooks beside its type, `to_json(json&, const Part&)` and a strict
// `from_json(const json&, Part&)` (core/json_field.hpp: a missing or mistyped field throws
// UsageError naming its path).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/comm.hpp"
#include "core/error.hpp"

namespace ioprobe::cluster {

/// Error (exit 1) for a part rank 0 cannot read: the rank, the step, why, and what to do (the
/// likely cause is hosts running different ioprobe builds).
[[noreturn]] void throw_unreadable_part(int rank, const char* step, const std::string& why);

/// The part `text` that rank `rank` sent in `step`, decoded by Part's from_json. Throws Error
/// (throw_unreadable_part) when it is not JSON or not a Part.
template <class Part>
Part decode_gathered(const std::string& text, int rank, const char* step) {
  try {
    return nlohmann::json::parse(text).get<Part>();
  } catch (const nlohmann::json::exception& e) {
    throw_unreadable_part(rank, step, e.what());
  } catch (const UsageError& e) {
    throw_unreadable_part(rank, step, e.what());
  }
}

/// Sends `mine` (encoded by Part's to_json) to rank 0 within `timeout_s` seconds (`step` names
/// the exchange in a watchdog message). Returns on rank 0 every process's part, by rank, decoded;
/// on the other ranks an empty vector. With a LocalComm: {mine} after a round trip through its
/// codec. Throws Error on rank 0 when a part cannot be read (decode_gathered).
template <class Part>
std::vector<Part> gather_parts(comm::Comm& comm, const Part& mine, const char* step, double timeout_s) {
  const std::vector<std::string> texts = comm.gather(nlohmann::json(mine).dump(), step, timeout_s);
  std::vector<Part> parts;
  if (comm.rank() != 0) return parts;
  parts.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) parts.push_back(decode_gathered<Part>(texts[i], static_cast<int>(i), step));
  return parts;
}

/// As gather_parts, but every rank gets every part (Comm::allgather), decoded, by rank.
template <class Part>
std::vector<Part> allgather_parts(comm::Comm& comm, const Part& mine, const char* step, double timeout_s) {
  const std::vector<std::string> texts = comm.allgather(nlohmann::json(mine).dump(), step, timeout_s);
  std::vector<Part> parts;
  parts.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) parts.push_back(decode_gathered<Part>(texts[i], static_cast<int>(i), step));
  return parts;
}

/// Rank 0's `mine` on every process (Comm::broadcast, within `timeout_s` seconds; `step` names the
/// exchange in a watchdog message): rank 0 gets its own value back untouched, the others rank 0's
/// decoded by Part's from_json. Throws Error (throw_unreadable_part, naming rank 0) on a process
/// that cannot read it. With a LocalComm: `mine`.
template <class Part>
Part broadcast_part(comm::Comm& comm, const Part& mine, const char* step, double timeout_s) {
  const std::string text = comm.broadcast(comm.rank() == 0 ? nlohmann::json(mine).dump() : std::string(), step,
                                          timeout_s);
  if (comm.rank() == 0) return mine;
  return decode_gathered<Part>(text, 0, step);
}

/// comm::TreeFold over a typed part: the accumulated Acc stays decoded; each child's is decoded
/// (decode_gathered) and added by `Acc::merge(const Acc& higher)`, which must take a part of the
/// ranks just above it (rank order).
template <class Acc>
class PartFold final : public comm::TreeFold {
 public:
  PartFold(Acc mine, const char* step) : acc_(std::move(mine)), step_(step) {}
  void add(int from, const std::string& child) override { acc_.merge(decode_gathered<Acc>(child, from, step_)); }
  std::string encoded() const override { return nlohmann::json(acc_).dump(); }
  Acc& value() { return acc_; }

 private:
  Acc acc_;
  const char* step_;
};

/// Merges every process's `mine` on rank 0 along Comm::reduce_tree's binomial tree within
/// `timeout_s` seconds (`step` names the exchange in a watchdog message): rank 0 receives
/// ceil(log2(processes)) merged subtrees, not one part per process. Returns the merge of every
/// rank's part on rank 0 (this rank's own, partly merged, elsewhere); `bytes_received` (may be
/// null) gets the bytes this rank received. Throws Error when a child's part cannot be read.
template <class Acc>
Acc reduce_parts(comm::Comm& comm, Acc mine, const char* step, double timeout_s, uint64_t* bytes_received) {
  PartFold<Acc> fold(std::move(mine), step);
  const uint64_t got = comm.reduce_tree(fold, step, timeout_s);
  if (bytes_received) *bytes_received = got;
  return std::move(fold.value());
}

}  // namespace ioprobe::cluster
