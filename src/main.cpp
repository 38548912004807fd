// ioprobe: storage and data-loading throughput tester for deep-learning clusters.
// Subcommand dispatch; `run` is the default when the first argument is an option or absent.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <system_error>
#include <vector>

#include <sys/resource.h>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cluster/collective.hpp"
#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace {

// What the host had when an allocation was refused: MemAvailable from /proc/meminfo and the
// address-space limit (ulimit -v). The failed request itself has been released by then.
std::string memory_now() {
  unsigned long long avail_kib = 0, total_kib = 0;
  if (FILE* f = std::fopen("/proc/meminfo", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      std::sscanf(line, "MemTotal: %llu kB", &total_kib);
      std::sscanf(line, "MemAvailable: %llu kB", &avail_kib);
    }
    std::fclose(f);
  }
  struct rlimit as {};
  const bool limited = getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
  return fmt::format("memory available now {} of {}; address-space limit (ulimit -v) {}",
                     total_kib ? ioprobe::format_bytes(avail_kib * 1024) : "unknown",
                     total_kib ? ioprobe::format_bytes(total_kib * 1024) : "unknown",
                     limited ? ioprobe::format_bytes(as.rlim_cur) : "unlimited");
}

struct Subcommand {
  const char* name;
  int (*fn)(const ioprobe::cli::CommandContext&);
  const char* summary;
};

const Subcommand kSubcommands[] = {
    {"run", ioprobe::cli::cmd_run,
     "emulate a PyTorch DataLoader over a dataset and report against GPU demand (default)"},
    {"gen", ioprobe::cli::cmd_gen, "generate a synthetic dataset (or check an existing one) without running"},
    {"tune", ioprobe::cli::cmd_tune,
     "sweep num_workers x prefetch_factor x NUMA placement and recommend a DataLoader setting"},
    {"capacity", ioprobe::cli::cmd_capacity,
     "search how many emulated accelerators the storage feeds at AU >= the target"},
    {"calibrate", ioprobe::cli::cmd_calibrate,
     "measure your own PyTorch Dataset's costs in real DataLoaders; --calibration uses them"},
    {"record", ioprobe::cli::cmd_record,
     "run your training command and record its data-file calls into a trace (or import DFTracer / strace)"},
    {"checkpoint", ioprobe::cli::cmd_checkpoint,
     "save and restore emulated training state; compare with raw write bandwidth"},
    {"raw", ioprobe::cli::cmd_raw, "fio-like raw I/O on a file or block device: IOPS, MB/s, latency, CPU per I/O"},
    {"scaling", ioprobe::cli::cmd_scaling,
     "read each RAID member alone, then the array: scaling efficiency against the RAID level"},
    {"probe", ioprobe::cli::cmd_probe, "show the storage target, NUMA layout, io_uring availability and engine choice"},
    {"replay", ioprobe::cli::cmd_replay,
     "replay a recorded job's I/O (ioprobe record) on this storage: elapsed, stalls, AU against the recording"},
    {"report", ioprobe::cli::cmd_report, "re-render saved result documents as text, HTML (--html) or CSV; compare two"},
};

void print_usage() {
  std::printf("ioprobe %s: can this storage feed these GPUs, and how do I tune the loader?\n\n", IOPROBE_VERSION);
  std::printf("usage: ioprobe [SUBCOMMAND] [OPTIONS]\n\nsubcommands:\n");
  for (const auto& s : kSubcommands) std::printf("  %-11s %s\n", s.name, s.summary);
  std::printf(
      "\nexamples:\n"
      "  ioprobe --dataset imagenet-like --workers 32      generate (first time) and read an ImageNet-shaped set\n"
      "  ioprobe --data /mnt/imagenet/train --gpus 8        your own files, read-only, against 8 H100s\n"
      "\n'ioprobe SUBCOMMAND --help' lists each subcommand's options.\n"
      "exit codes: 0 ok, 1 run failed, 2 bad usage or input, 130/143 interrupted (a measuring command prints and "
      "writes its partial result)\n");
}

// Subcommands that run across the processes of an mpirun / srun job; the others refuse there.
bool runs_across_hosts(const Subcommand* cmd) {
  return cmd && (std::strcmp(cmd->name, "run") == 0 || std::strcmp(cmd->name, "gen") == 0 ||
                 std::strcmp(cmd->name, "raw") == 0 || std::strcmp(cmd->name, "tune") == 0 ||
                 std::strcmp(cmd->name, "checkpoint") == 0 || std::strcmp(cmd->name, "capacity") == 0 ||
                 std::strcmp(cmd->name, "replay") == 0);
}

int dispatch(const Subcommand* cmd, const ioprobe::cli::CommandContext& ctx);

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: MPI_Init when a launcher started several processes (it may rewrite
  // argv), nothing otherwise.
  std::unique_ptr<ioprobe::comm::Comm> comm;
  try {
    comm = ioprobe::comm::make_comm(&argc, &argv);
  } catch (const ioprobe::UsageError& e) {
    // A refusal of the launch itself: every process read the same launcher variables and refuses
    // alike, so the process the launcher numbered 0 alone prints it (once, not once per task).
    if (ioprobe::comm::detect_launcher().rank == 0) ioprobe::error_message(e.what());
    return e.exit_code();
  } catch (const ioprobe::Error& e) {
    ioprobe::error_message(e.what());
    return e.exit_code();
  }
  ioprobe::cli::CommandContext ctx;
  ctx.comm = comm.get();
  for (int i = 0; i < argc; ++i) ctx.argv.emplace_back(argv[i]);
  std::vector<std::string> rest(ctx.argv.begin() + (argc > 0 ? 1 : 0), ctx.argv.end());

  const Subcommand* cmd = &kSubcommands[0];
  if (!rest.empty()) {
    const std::string& first = rest.front();
    if (first == "--version" || first == "-V") {
      if (rest.size() > 1) {
        ioprobe::error_message(fmt::format("--version takes no argument (got '{}')", ioprobe::escape_bytes(rest[1])));
        return ioprobe::kExitUsage;
      }
      std::printf("ioprobe %s\n", IOPROBE_VERSION);
      return 0;
    }
    if (first == "help" || ((first == "--help" || first == "-h") && rest.size() == 1)) {
      print_usage();
      std::printf("\n");
      rest = {"--help"};
    } else if (first.empty() || first[0] != '-') {
      cmd = nullptr;
      for (const auto& s : kSubcommands)
        if (first == s.name) cmd = &s;
      if (!cmd) {
        ioprobe::error_message(fmt::format("unknown subcommand '{}'; see 'ioprobe --help'", first));
        return ioprobe::kExitUsage;
      }
      rest.erase(rest.begin());
    }
  }
  ctx.args = rest;
  ioprobe::set_message_command(cmd->name);  // every message of the command from here on: "ioprobe NAME: "
  if (comm->multi() && !runs_across_hosts(cmd)) {
    if (comm->rank() == 0)
      ioprobe::error_message(fmt::format(
          "'{}' does not run across hosts yet (started by {} as {} processes); run it on one host without the "
          "launcher. Across hosts: ioprobe run, gen, raw, tune, checkpoint, capacity, replay",
          cmd->name, comm->launcher(), comm->size()));
    return ioprobe::kExitUsage;
  }
  ioprobe::install_interrupt_handlers();
  const int rc = dispatch(cmd, ctx);
  if (rc != 0 && comm->multi() && !ctx.job_outcome_shared) {
    // A failure the other processes do not know of: they may be waiting for this one in a
    // collective, so end the whole job (mpirun then names this rank and host too).
    ioprobe::error_message(
        fmt::format("rank {} on host {} failed (exit {}); ending the job", comm->rank(), comm->hostname(), rc));
    comm->abort(rc);
  }
  return rc;
}

namespace {

int dispatch(const Subcommand* cmd, const ioprobe::cli::CommandContext& ctx) {
  try {
    return cmd->fn(ctx);
  } catch (const ioprobe::cluster::JobFailure& e) {
    ctx.job_outcome_shared = true;
    if (*e.what()) ioprobe::error_message(e.what());
    return e.exit_code();
  } catch (const ioprobe::Error& e) {
    // Bad usage is found alike by every process of a job (the same options): rank 0 says it.
    const bool quiet = ctx.comm->multi() && ctx.comm->rank() != 0 && e.exit_code() == ioprobe::kExitUsage;
    if (!quiet) ioprobe::error_message(e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    ioprobe::error_message(
        fmt::format("out of memory: an allocation was refused ({}); lower the sizes that hold memory (checkpoint: "
                    "--size, --ranks, --io-size x --io-depth; run: --workers x --prefetch-factor x --batch-size) or "
                    "raise the limit",
                    memory_now()));
    return ioprobe::kExitFailure;
  } catch (const std::system_error& e) {  // e.g. std::thread: EAGAIN at a thread or memory limit
    ioprobe::error_message(
        fmt::format("{}: the host refused a resource (threads or memory); lower --ranks, --workers, --numjobs or "
                    "--compress-threads or raise the limit (ulimit -u, -v; a cgroup's pids.max)",
                    e.what()));
    return ioprobe::kExitFailure;
  } catch (const std::exception& e) {
    ioprobe::error_message(std::string("internal error: ") + e.what());
    return ioprobe::kExitFailure;
  }
}

}  // namespace
