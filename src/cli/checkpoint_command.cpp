// `ioprobe checkpoint`: how fast model state is saved to a target and restored from it. This file
// parses (cli/checkpoint_config), prepares the directory (cli/checkpoint_dir) and checks
// (cli/checkpoint_preflight), hands the steps to checkpoint/orchestrator with this command's hooks
// (progress lines, warnings, device accounting, the other processes), and the results to report/.
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "checkpoint/orchestrator.hpp"
#include "checkpoint/run_data.hpp"
#include "checkpoint/state_content.hpp"
#include "cli/checkpoint_cluster_steps.hpp"
#include "cli/checkpoint_config.hpp"
#include "cli/checkpoint_dir.hpp"
#include "cli/checkpoint_preflight.hpp"
#include "cli/checkpoint_readback.hpp"
#include "cli/commands.hpp"
#include "cli/device_accounting.hpp"
#include "cli/same_options.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "core/units.hpp"
#include "report/checkpoint_document.hpp"
#include "report/checkpoint_report.hpp"
#include "report/checkpoint_series.hpp"
#include "report/document.hpp"
#include "report/error_text.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

using namespace checkpoint;

namespace {

// What the orchestration needs from this command: lines on stderr, warnings kept in the result,
// the other processes (CheckpointJob), and device accounting (an idle window just before the
// save, then marks around each save and its restore).
class CommandHooks final : public CheckpointHooks {
 public:
  CommandHooks(const CheckpointConfig& c, CheckpointRunData& d, CheckpointJob& job, const TargetInfo& target)
      : c_(c), d_(d), job_(job), target_(target) {}

  void progress(const std::string& line) override {
    if (!c_.quiet && job_.lead()) message(line);
  }
  void warn(const std::string& w) override {
    d_.warnings.push_back(w);
    warning(w);
  }
  bool sync_stopped(const char* step) override { return job_.sync_stopped(step); }
  void before_save() override {
    devices_ = device_recorder(target_);  // an idle window now
    // Across processes the host's save window opens here, before the barrier that starts every
    // process's save: another process of this host may pass it first and write before this one's
    // mark(0), which the window must not miss.
    if (job_.multi()) {
      devices_->mark();
      window_open_ = true;
    }
  }
  std::optional<RawWriteResult> merge_raw(std::optional<RawWriteResult> mine, std::string& why) override {
    return job_.merge_raw(std::move(mine), why);
  }
  bool restores_after_save() const override { return job_.multi(); }
  void after_save(CheckpointRunData& d, bool restore) override { job_.after_save(d, restore, devices()); }
  void mark(int phase) override {
    if (phase == 0 && window_open_) {  // the first save's window is already open (before_save)
      window_open_ = false;
      return;
    }
    if (phase == 0) devices().clear();
    devices().mark();
  }
  void on_save(const SeriesSave& s) override {
    if (c_.series) progress(series_save_line(s, c_.repeat, c_.save.fsync));
  }
  DeviceIoRecorder& devices() {
    if (!devices_) devices_ = device_recorder(target_, 0);  // stopped before the save: nothing measured
    return *devices_;
  }

 private:
  const CheckpointConfig& c_;
  CheckpointRunData& d_;
  CheckpointJob& job_;
  const TargetInfo& target_;
  std::unique_ptr<DeviceIoRecorder> devices_;
  bool window_open_ = false;
};

// Says which directories this run made for --dir and whether they went again, so that a --dir
// that did not exist never appears and disappears unseen.
void print_made_dirs(const CheckpointDir::Made& made) {
  if (made.dirs.empty()) return;
  auto quoted = [&](size_t from, size_t to) {
    std::string out;
    for (size_t i = from; i < to; ++i)
      out += fmt::format("{}'{}'", out.empty() ? "" : ", ", escape_bytes(made.dirs[i]));
    return out;
  };
  const size_t n = made.dirs.size();
  if (made.removed == n)
    std::printf("created for this run and removed again (empty at its end): %s\n", quoted(0, n).c_str());
  else if (made.removed == 0) std::printf("created for this run, kept: %s\n", quoted(0, n).c_str());
  else
    std::printf("created for this run: %s; removed again (empty at its end): %s\n", quoted(made.removed, n).c_str(),
                quoted(0, made.removed).c_str());
}

void print_plan(const StateSpec& s) {
  std::printf("state: %s; world %d (tp %d x pp %d x dp %d, ZeRO-%d) = %s in all; this host: %zu rank(s), %s\n",
              s.source.c_str(), s.world, s.tp, s.pp, s.dp, s.zero_stage, format_bytes(s.world_bytes).c_str(),
              s.ranks.size(), format_bytes(s.host_bytes).c_str());
  for (const auto& r : s.ranks) {
    std::printf("  rank %d: %s =", r.rank, format_bytes(r.bytes).c_str());
    for (const auto& g : r.regions) std::printf(" %s %s;", tensor_kind_name(g.kind), format_bytes(g.bytes).c_str());
    std::printf("\n");
  }
}

int checkpoint_body(const CommandContext& ctx, CheckpointJob& job) {
  const int64_t t_start = now_ns();
  const HostInfo host = probe_host();
  if (ctx.comm && ctx.comm->multi()) {
    // Across hosts: every process must run this one plan, compared before the first exchange of
    // the configuration (its rank numbering) and before any I/O.
    const po::options_description desc = checkpoint_options();
    const po::variables_map vm = parse_command_line(ctx.args, desc, "checkpoint");
    check_same_options(ctx, vm, desc, "checkpoint", PresetFile::kCheckpointModel);
  }
  const ParsedCheckpoint p = parse_checkpoint_config(ctx.args, host, job);
  if (p.help) {
    if (job.lead())
      std::cout
          << "usage: ioprobe checkpoint [OPTIONS]\n\n"
             "Saves emulated training state (one shard file per rank, as PyTorch DCP writes it) to --dir with\n"
             "io_uring, O_DIRECT, double buffering, fsync and atomic rename; measures the raw sequential write\n"
             "bandwidth of the same directory in the same run and prints checkpoint/raw. The default, 1GiB of\n"
             "state, finishes in a few seconds on a 1 GB/s disk.\n\n"
          << checkpoint_options()
          << "\nexamples:\n"
             "  ioprobe checkpoint --dir /mnt/nvme/ckpt --size 1GiB --compress zstd:1 --restore\n"
             "  ioprobe checkpoint --dir /mnt/nvme/ckpt --model llama3-8b --ranks 2   (2 of 8 ranks: 26 GB)\n"
             "  ioprobe checkpoint --dir /mnt/nvme/ckpt --size 4GiB --async --step-time 200ms\n"
             "  ioprobe checkpoint --dir /dev/shm/ck --size 256MiB --duration 10m --restore --quiet   (soak)\n"
             "  ioprobe checkpoint --dir /mnt/nvme/ckpt --size 4GiB --compress zstd:1 --keep   (then, later or "
             "elsewhere:)\n"
             "  ioprobe checkpoint --dir /mnt/nvme/ckpt --restore-only   (or --verify-only: checksums, no "
             "decompression)\n"
             "repeated saves (--repeat, --duration) print one line per save on stderr and a summary:\n"
             "  count and min / median / max MB/s; Ctrl-C ends the series with the saves completed so far.\n"
             "across hosts: mpirun -np N --hostfile H ioprobe checkpoint --dir D --ranks R (R shards per process)\n"
             "\nExit codes: 0 ok (also when the raw comparison could not run: the report says why),\n"
             "  1 save/restore failed (ENOSPC, EIO, checksum) or too little free space for the checkpoint,\n"
             "  2 bad usage (including an unwritable --json path; with --restore-only or --verify-only a --dir\n"
             "  that holds no ioprobe checkpoint or a shard whose trailer or index is truncated or damaged),\n"
             "  130/143 interrupted\n";
    return kExitOk;
  }
  const CheckpointConfig& c = p.config;
  if (c.readback != Readback::kNone) {
    if (job.multi())
      throw UsageError("--restore-only and --verify-only read the shards of one directory on one host: run them "
                       "without the launcher, on each host whose --dir holds shards");
    return run_checkpoint_readback(ctx, c, host, t_start);
  }
  if (c.plan_only) {
    if (job.lead()) print_plan(c.state);
    return kExitOk;
  }
  CheckpointRunData d;
  d.state = c.state;
  d.opts = c.save;
  d.dir = c.dir;
  d.cpus_allowed = c.cpus_allowed;
  d.async = c.async;
  d.step_time_s = c.step_time_s;
  d.restore_threads = c.restore_threads;
  d.restore_cold = c.restore_cold;
  if (!c.raw_baseline) d.raw_unavailable = "--raw-baseline off";

  // --dir made when missing, checked and locked; what this run made goes again when empty.
  CheckpointDir dir(c.dir, c.state, c.json_path, job);
  check_buffers(d, c.restore, c.memory_budget_bytes);
  const TargetInfo target = probe_target(d.dir);
  CommandHooks hooks(c, d, job, target);
  checkpoint_preflight(p, target, d, [&](const std::string& w) { hooks.warn(w); });

  const SeriesResult series = run_checkpoint(c, d, hooks);
  const CheckpointDir::Made made = dir.finish(c.keep, c.json_path);

  job.finish(d);  // rank 0 now holds every process's ranks
  if (!job.lead()) return kExitOk;
  CheckpointDocument doc;
  doc.header = checkpoint_header(ctx.argv, host);
  doc.target = target_section(target);
  doc.section = checkpoint_section(d);
  doc.section.elapsed_s = (now_ns() - t_start) / 1e9;  // the whole command, setup included
  doc.section.state.content = state_content_name(c.content);
  job.add_sections(doc);
  if (c.series) doc.section.series = checkpoint_series_section(series, c.repeat, c.duration_s, c.save.fsync);
  add_checkpoint_device_io(doc, hooks.devices(), target);
  const bool partial = interrupted() || d.save.interrupted || (d.restore && d.restore->interrupted);
  doc.partial = partial;
  doc.warnings.insert(doc.warnings.end(), d.warnings.begin(), d.warnings.end());
  std::fputs(render_checkpoint_text(doc).c_str(), stdout);
  std::fputs(render_series_text(doc).c_str(), stdout);
  if (c.keep && d.save.ok) std::printf("kept: %s/__*_0.distcp\n", d.dir.c_str());
  print_made_dirs(made);
  std::fflush(stdout);
  if (!c.json_path.empty()) write_checkpoint_document(c.json_path, doc);
  if (partial) return interrupt_exit_code() ? interrupt_exit_code() : kExitSigint;
  if (!d.save.ok) {
    error_message(d.save.failure.empty() ? std::string("checkpoint save failed")
                                         : "checkpoint save failed: " + error_text(d.save.failure));
    return kExitFailure;
  }
  if (d.restore && !d.restore->ok) {
    for (const auto& r : d.restore->ranks)
      if (!r.error.empty())
        error_message(
            fmt::format("restore failed: {}{}", error_text(r.error),
                        r.corrupt
                            ? "; the shard read back is not what this run wrote (zstd or the checksum refused it): "
                              "the storage returned other bytes than it was given; check the device (dmesg, SMART) "
                              "and any cache or network layer under --dir, then rerun"
                            : ""));
    return kExitFailure;
  }
  return kExitOk;
}
}  // namespace

int cmd_checkpoint(const CommandContext& ctx) {
  return run_checkpoint_job(ctx, [&](CheckpointJob& job) { return checkpoint_body(ctx, job); });
}

}  // namespace ioprobe::cli
