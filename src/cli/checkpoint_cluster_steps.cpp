#include "cli/checkpoint_cluster_steps.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <boost/scope_exit.hpp>

#include "checkpoint/saver.hpp"
#include "cluster/collective.hpp"
#include "cluster/gather.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "report/checkpoint_cluster_json.hpp"
#include "report/error_text.hpp"

namespace ioprobe::cli {

using namespace checkpoint;

CheckpointJob::CheckpointJob(comm::Comm& comm) : comm_(comm) {
  if (!multi()) return;
  // No failure can have happened yet: every process constructs its job first.
  const auto all = comm_.allgather(fmt::format("{} {}", comm_.host_index(), comm_.hostname()), "start the checkpoint",
                                   0);
  for (const auto& s : all) {
    const size_t sp = s.find(' ');
    host_of_.push_back(std::atoi(s.substr(0, sp).c_str()));
    hosts_.push_back(sp == std::string::npos ? "?" : s.substr(sp + 1));
  }
}

std::vector<std::string> CheckpointJob::collect(const char* step, const std::string& tagged) {
  const std::vector<std::string> all = comm_.allgather(tagged, step, 0);
  std::vector<std::string> outcomes, payloads;
  stopped_ = false;
  for (const std::string& s : all) {
    const char tag = s.empty() ? 'K' : s[0];
    outcomes.push_back(tag == 'F' ? s.substr(1) : "");
    payloads.push_back(s.empty() ? "" : s.substr(1));
    stopped_ = stopped_ || tag == 'I';
  }
  cluster::raise_failures(comm_, outcomes, hosts_, step);
  return payloads;
}

std::vector<std::string> CheckpointJob::exchange(const char* step, const std::string& payload) {
  if (!multi()) return {payload};
  return collect(step, (interrupted() ? "I" : "K") + payload);
}

void CheckpointJob::fail(const std::string& outcome) {
  collect("end the job after a failure", "F" + (outcome.empty() ? std::to_string(kExitFailure) + " " : outcome));
  throw cluster::JobFailure("", kExitFailure);  // not reached: collect() threw
}

bool CheckpointJob::sync_stopped(const char* step) {
  if (!multi()) return interrupted();
  exchange(step);
  return stopped_;
}

void CheckpointJob::check_options(bool series, bool async) const {
  if (!multi()) return;
  if (series)
    throw UsageError("--repeat and --duration do not run across hosts yet: run one save per mpirun, or the series on "
                     "one host without the launcher");
  if (async)
    throw UsageError("--async does not run across hosts yet: drop it, or run it on one host without the launcher");
}

int CheckpointJob::number_ranks(int ranks, uint64_t size_bytes) {
  first_of_.clear();
  count_of_.clear();
  if (!multi()) {
    first_of_ = {0};
    count_of_ = {ranks};
    job_ranks_ = ranks;
    job_size_bytes_ = size_bytes;
    return ranks;
  }
  const auto all = exchange("number the checkpoint ranks", fmt::format("{} {}", ranks, size_bytes));
  job_ranks_ = 0;
  job_size_bytes_ = 0;
  for (const auto& s : all) {
    int n = 0;
    unsigned long long b = 0;
    if (std::sscanf(s.c_str(), "%d %llu", &n, &b) != 2)
      throw Error("a process sent no rank count: run the same ioprobe build on every host", kExitFailure);
    first_of_.push_back(job_ranks_);
    count_of_.push_back(n);
    job_ranks_ += n;
    job_size_bytes_ += b;
  }
  first_rank_ = first_of_[static_cast<size_t>(comm_.rank())];
  return job_ranks_;
}

void CheckpointJob::own_ranks(StateSpec& s) const {
  if (!multi()) return;
  if (s.source == "--size") {
    for (auto& r : s.ranks) r.rank += first_rank_;
    s.world = s.dp = job_ranks_;
    s.world_bytes = job_size_bytes_;
    return;
  }
  s.ranks.erase(s.ranks.begin(),
                s.ranks.begin() + std::min<ptrdiff_t>(first_rank_, static_cast<ptrdiff_t>(s.ranks.size())));
  s.host_bytes = 0;
  for (const auto& r : s.ranks) s.host_bytes += r.bytes;
}

void CheckpointJob::create_in_turn(const std::function<void()>& create) {
  if (!multi()) return create();
  // Rank 0 is its host's first process (host groups are split by world rank), so it makes rank
  // 0's directory; each other host's first process makes that host's when it is not shared.
  const int turn = lead() ? 0 : comm_.local_rank() == 0 ? 1 : 2;
  for (int t = 0; t < 3; ++t) {
    if (t == turn) create();
    exchange("create --dir in turn");
  }
}

void CheckpointJob::detect_dir_placement(const std::string& dir) {
  if (!multi()) return;
  // Rank 0 leaves a marker in its --dir; whoever sees it shares that directory.
  std::string marker;
  BOOST_SCOPE_EXIT(&marker) {
    if (!marker.empty()) ::unlink(marker.c_str());
  }
  BOOST_SCOPE_EXIT_END
  std::string name;
  if (lead()) {
    name = fmt::format(".ioprobe-placement.{}.{}", ::getpid(), std::random_device{}());
    const std::string path = dir + "/" + name;
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) throw IoError(errno, "create", path, "give --dir a directory every process may write");
    ::close(fd);
    marker = path;
  }
  name = exchange("find out whether --dir is shared", name).at(0);
  std::error_code ec;
  const bool sees = lead() || std::filesystem::exists(dir + "/" + name, ec);
  const auto seen = exchange("find out whether --dir is shared", sees ? "1" : "0");
  int sharing = 0;
  for (const auto& s : seen) sharing += s == "1" ? 1 : 0;
  const int n = comm_.size();
  shared_ = sharing == n;  // one directory: shards can be read by another process (another host's, where there is one)
  placement_ = sharing == n ? (comm_.host_count() > 1 ? "shared (one directory seen by every host)" : "one host")
               : sharing == static_cast<int>(std::count(host_of_.begin(), host_of_.end(), host_of_[0]))
                   ? "node-local (each host has its own directory at this path)"
                   : fmt::format("mixed ({} of {} processes share rank 0's directory)", sharing, n);
  // One lock per directory: rank 0's, and the first process's of each host that does not see it.
  locks_dir_ = lead() || (!sees && comm_.local_rank() == 0);
}

std::optional<RawWriteResult> CheckpointJob::merge_raw(std::optional<RawWriteResult> mine, std::string& why) {
  if (!multi()) return mine;
  const auto all = exchange("merge the raw baselines", mine ? "R" + encode_raw_write(*mine) : "X" + why);
  std::vector<RawWriteResult> runs;
  std::string missing;
  for (size_t p = 0; p < all.size(); ++p) {
    if (!all[p].empty() && all[p][0] == 'R') runs.push_back(decode_raw_write(all[p].substr(1)));
    else missing += fmt::format("{}host {} (rank {}): {}", missing.empty() ? "" : "; ", hosts_[p], p, all[p].substr(1));
  }
  if (!missing.empty()) {
    why = "not measured on every host at once: " + missing;
    return std::nullopt;
  }
  return merge_raw_writes(runs);
}

void CheckpointJob::after_save(CheckpointRunData& d, bool restore, DeviceIoRecorder& devices) {
  if (!multi()) return;
  if (!d.save.ok && !d.save.interrupted)
    throw Error(fmt::format("checkpoint rank {}: {}", d.save.failed_rank,
                            d.save.failure.empty() ? "the save failed" : error_text(d.save.failure)),
                kExitFailure);
  // Every process's shards are published before any is read back.
  const bool stopped = sync_stopped("wait for every process's save");
  // The save window on this host: from this process's mark before its save (mark(0)) to here,
  // after every process's save; the mark also starts the restore window.
  devices.mark();
  save_device_io_ = devices.whole();  // source "none" with the reason when no save ran here
  if (stopped || !restore) return;
  const std::vector<int> src = shared_ ? restore_sources(host_of_) : std::vector<int>{};
  const int me = comm_.rank(), from = shared_ ? src[static_cast<size_t>(me)] : me;
  std::vector<std::string> paths;
  restore_shards_.clear();
  for (int g = first_of_[static_cast<size_t>(from)], e = g + count_of_[static_cast<size_t>(from)]; g < e; ++g) {
    paths.push_back(shard_path(d.dir, g));
    restore_shards_.push_back(g);
  }
  restore_writer_ = hosts_[static_cast<size_t>(from)];
  const int shift = shared_ ? src[0] : 0;  // process 0 reads process shift's shards
  restore_placement_ =
      !shared_ ? "each host restored its own shards (--dir is not one shared directory)"
      : comm_.host_count() > 1
          ? fmt::format(
                "process p restored the shards that process (p + {}) mod {} wrote ({} = the processes on rank 0's "
                "host), so each shard is read on another host where the hosts run as many processes each",
                shift, comm_.size(), shift)
          : fmt::format("process p restored the shards that process (p + {}) mod {} wrote (one host: another process's "
                        "shards, cold by eviction or O_DIRECT)",
                        shift, comm_.size());
  // Every process of a host has marked before any reads: each one's window then holds the host's
  // whole restore, whichever host_device_io keeps.
  exchange("start the restore on every process");
  d.restore = restore_checkpoint(paths, d.opts.io.io_size, d.restore_threads, d.restore_cold);
  // No process removes its shards while another may still read them.
  exchange("wait for every process's restore");
  devices.mark();
  restore_device_io_ = devices.intervals().back();
}

void CheckpointJob::finish(CheckpointRunData& d) {
  if (!multi()) return;
  CheckpointPart p;
  p.mpi_rank = comm_.rank();
  p.host_index = comm_.host_index();
  p.hostname = comm_.hostname();
  p.state = d.state.ranks;
  p.save = d.save;
  p.file_bytes = d.file_bytes;
  p.restore = d.restore;
  p.restore_shards = restore_shards_;
  p.restore_writer_host = restore_writer_;
  p.restore_device_io = restore_device_io_;
  p.save_device_io = save_device_io_;
  const auto all = exchange("gather the results", nlohmann::json(p).dump());
  if (!lead()) return;
  std::vector<CheckpointPart> parts;
  for (size_t i = 0; i < all.size(); ++i)
    parts.push_back(cluster::decode_gathered<CheckpointPart>(all[i], static_cast<int>(i), "gather the results"));
  cluster_ = merge_checkpoint_parts(std::move(parts));
  d.state.ranks = cluster_->state;
  d.state.host_bytes = 0;
  for (const auto& r : d.state.ranks) d.state.host_bytes += r.bytes;
  d.save = cluster_->save;
  d.file_bytes = cluster_->file_bytes;
  d.restore = cluster_->restore;
}

void CheckpointJob::add_sections(CheckpointDocument& doc) const {
  if (!cluster_) return;
  doc.cluster = checkpoint_cluster_section(*cluster_, comm_.launcher(), placement_, restore_placement_);
  doc.hosts = checkpoint_host_sections(*cluster_);
  annotate_checkpoint_ranks(doc.section, *cluster_);
  add_cluster_restore_device_io(doc.section, *cluster_);
  add_cluster_save_device_io(doc.section, *cluster_);
  for (const auto& w : cluster_->warnings) doc.warnings.push_back(w);
}

int run_checkpoint_job(const CommandContext& ctx, const std::function<int(CheckpointJob&)>& body) {
  CheckpointJob job(*ctx.comm);
  if (!job.multi()) return body(job);
  int rc = 0;
  try {
    rc = body(job);
  } catch (const cluster::JobFailure&) {
    throw;
  } catch (...) {
    const std::exception_ptr ep = std::current_exception();
    job.fail(cluster::outcome_of([&] { std::rethrow_exception(ep); }));
  }
  // Rank 0 decided from the merged result; every process exits with its code.
  const auto all = job.exchange("share the exit code", std::to_string(rc));
  ctx.job_outcome_shared = true;
  return std::atoi(all.at(0).c_str());
}

}  // namespace ioprobe::cli
