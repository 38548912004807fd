// `ioprobe raw`: fio-like raw file / block device I/O (options, validation, run, report).
#include <libgen.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/device_accounting.hpp"
#include "cli/gpu_preflight.hpp"
#include "cli/raw_cluster.hpp"
#include "cli/run_cluster.hpp"
#include "cli/same_options.hpp"
#include "cluster/collective.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine.hpp"
#include "engine/page_cache.hpp"
#include "engine/uring_memlock.hpp"
#include "raw/raw_config.hpp"
#include "raw/raw_run.hpp"
#include "raw/raw_target.hpp"
#include "report/document.hpp"
#include "report/raw_document.hpp"
#include "report/raw_report.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

namespace {

po::options_description raw_options() {
  po::options_description d("ioprobe raw options");
  auto str = [] { return po::value<std::string>(); };
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("filename", str(), "file or block device, used verbatim (':' and spaces are part of the name); a missing "
                          "file is created with --size bytes")
      ("rw", str(), "read | randread | write | randwrite (default read)")
      ("bs", str(), "bytes per request, e.g. 4k, 128k (default 4k); a multiple of 4096 with --direct 1")
      ("iodepth", str(), "requests in flight per job (default 1; psync runs 1)")
      ("numjobs", str(), "threads, each with its own fd and engine (default 1)")
      ("size", str(), "bytes each job covers, e.g. 1G (default: the whole existing file)")
      ("direct", str()->implicit_value("1"), "1: O_DIRECT, bypass the page cache (default 0)")
      ("engine", str(), "io_uring | psync | auto | gds (default auto: picked per target, and the report says why; gds "
                      "needs a cuFile reader ioprobe has not yet: refused, naming what to use)")
      ("runtime", str(), "run this long, wrapping over the region, e.g. 10s (default: one pass over --size)")
      ("sqpoll", str()->implicit_value("1"), "1: ask io_uring for a submission polling thread (default 0)")
      ("allow-overwrite", str()->implicit_value("1"),
       "permit write tests on a file or device ioprobe did not create (destroys its data)")
      ("seed", str(), "seed of the random offsets (default 17519806)")
      ("cache", str(), "buffered reads: cold | warm (default cold: the region's pages are evicted before the run, "
                       "posix_fadvise DONTNEED after fdatasync as fio's invalidate=1, so a file just laid out is read "
                       "from the device; warm keeps what is cached, and a resident region is labelled page cache)")
      ("json", str(), "also write the result document to this file (atomically)")
      ("quiet", str()->implicit_value("true"), "no progress lines (layout and run; warnings stay)");
  // clang-format on
  return d;
}

RawConfig build_config(const po::variables_map& vm) {
  RawConfig c;
  if (!has(vm, "filename")) throw UsageError("raw: --filename is required (a file or block device path); see --help");
  c.filename = get_string(vm, "filename");
  if (c.filename.empty()) throw UsageError("raw: --filename is empty; give a file or block device path");
  c.progress = !get_bool(vm, "quiet", false);
  std::string rw = get_choice(vm, "rw", "read", {"read", "randread", "write", "randwrite"});
  c.rw = rw == "read"       ? RawPattern::read
         : rw == "randread" ? RawPattern::randread
         : rw == "write"    ? RawPattern::write
                            : RawPattern::randwrite;
  c.bs = static_cast<uint32_t>(get_size(vm, "bs", 4096, 1, 64ULL << 20));
  c.iodepth = static_cast<unsigned>(get_count(vm, "iodepth", 1, 1, 4096));
  c.numjobs = static_cast<unsigned>(get_count(vm, "numjobs", 1, 1, 1024));
  c.size = get_size(vm, "size", 0, 0, UINT64_MAX);
  if (vm.count("size") && c.size == 0)
    throw UsageError(fmt::format("--size {}: a size of 0 B is refused; give the bytes each job covers, at least --bs, "
                                 "as a number with a unit (B, KB, MB, GB, TB or KiB, MiB, GiB, TiB; e.g. --size 1GiB), "
                                 "or drop --size to use the whole existing file",
                                 escape_bytes(vm["size"].as<std::string>())));
  c.direct = get_bool(vm, "direct", false);
  const std::string engine = get_choice(vm, "engine", "auto", {"io_uring", "psync", "auto", "gds"});
  if (engine == "gds") refuse_gds();  // run's refusal: what GPUDirect Storage lacks, what to use instead
  c.engine = engine_selection_from_string(engine).value_or(EngineSelection::kAuto);
  c.runtime_s = get_duration(vm, "runtime", 0);
  c.sqpoll = get_bool(vm, "sqpoll", false);
  c.allow_overwrite = get_bool(vm, "allow-overwrite", false);
  c.seed = get_count(vm, "seed", c.seed, 0, UINT64_MAX);
  c.cold = get_choice(vm, "cache", "cold", {"cold", "warm"}) == "cold";
  if (c.direct && c.bs % kDirectAlign) {
    // 4MB is 4,000,000 B (decimal units); the binary unit of the same number is usually meant.
    std::string hint;
    for (const auto& [dec, bin, unit] :
         {std::tuple{1000000000ULL, 1ULL << 30, "GiB"}, std::tuple{1000000ULL, 1ULL << 20, "MiB"},
          std::tuple{1000ULL, 1ULL << 10, "KiB"}})
      if (hint.empty() && c.bs % dec == 0 && (c.bs / dec * bin) % kDirectAlign == 0)
        hint = fmt::format(" (KB, MB and GB are powers of 10; --bs {}{} is {})", c.bs / dec, unit,
                           format_bytes(c.bs / dec * bin));
    // A byte size is echoed with its unit and its exact bytes, never as a bare count ("1,000").
    throw UsageError(fmt::format("--bs {}: O_DIRECT needs a multiple of {}; use e.g. --bs 4k or --direct 0{}",
                                 format_bytes(c.bs), format_bytes(kDirectAlign), hint));
  }
  if (c.size && c.size < c.bs)
    throw UsageError(fmt::format("--size {} is smaller than --bs {}; give at least one block", format_bytes(c.size),
                                 format_bytes(c.bs)));
  return c;
}

// Locked memory: each job's ring (--iodepth entries) and registered buffers count against
// RLIMIT_MEMLOCK (engine/uring_memlock.hpp); decided before any job starts (it may fall back to
// psync: `choice` then says so).
void plan_memlock(RawConfig& cfg, const HostInfo& host, RawEngineChoice& choice, std::vector<std::string>& warnings) {
  if (choice.name != EngineKind::kIoUring) return;
  MemlockNeed need;
  need.rings = cfg.numjobs + 1;  // and the ring choose_raw_engine's probe just closed (uncharged asynchronously)
  need.ring_bytes = ring_locked_bytes(cfg.iodepth, 2 * cfg.iodepth);
  need.rings_charged = kernel_charges_rings(host.kernel);
  const uint64_t stride = (static_cast<uint64_t>(cfg.bs) + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
  // The engine maps its buffers in 2 MiB huge pages (engine.cpp allocate_slots), charged whole.
  need.registered_bytes = cfg.numjobs *
                          registered_locked_bytes(std::max<uint64_t>(kHugePageBytes, stride * cfg.iodepth));
  MemlockPlan plan = apply_memlock_plan(cfg.engine, need, read_memlock_limit(), choice.name, choice.reason, warnings);
  if (plan.step == MemlockStep::no_fixed_buffers) cfg.fixed_buffers = false;
}

// A file this process laid out for a multi-process run (PATH.rank<R>) is removed at the end.
struct RemoveCreatedFile {
  std::string path;
  RemoveCreatedFile() = default;
  RemoveCreatedFile(const RemoveCreatedFile&) = delete;
  RemoveCreatedFile& operator=(const RemoveCreatedFile&) = delete;
  ~RemoveCreatedFile() {
    if (!path.empty()) unlink(path.c_str());
  }
};

// Watchdog of the start barriers and of the gather of a --runtime run (seconds).
constexpr double kRawBarrierTimeoutS = 120;

std::string dir_of(const std::string& path) {
  std::string copy = path;
  return dirname(copy.data());
}

}  // namespace

int cmd_raw(const CommandContext& ctx) {
  po::options_description desc = raw_options();
  po::variables_map vm = parse_command_line(ctx.args, desc, "raw");
  if (vm.count("help")) {
    std::printf("usage: ioprobe raw --filename PATH [OPTIONS]\n\n"
                "fio-like raw I/O on one file or block device: IOPS, MB/s, latency percentiles and CPU per I/O.\n\n");
    std::cout << desc << "\n";
    std::printf(
        "examples:\n"
        "  ioprobe raw --filename /data/t.bin --size 1G --rw randread --bs 4k --iodepth 32 --direct 1 --runtime 10s\n"
        "  ioprobe raw --filename /dev/shm/t.bin --size 1G --rw read --bs 128k --iodepth 16 --runtime 10s\n"
        "across hosts (each process reads or writes its own PATH.rank<R>; one merged report):\n"
        "  mpirun -np 4 --hostfile H ioprobe raw --filename /mnt/pfs/t.bin --size 1G --rw randread --direct 1 "
        "--runtime 10s\n"
        "tools/bench-fio runs the same jobs under fio and ioprobe side by side (tools/bench-multihost-fio: across "
        "hosts).\n\n"
        "Exit codes: 0 ok, 1 a job failed (an I/O error), 2 bad usage or target, 130/143 interrupted\n"
        "  (partial result).\n");
    return kExitOk;
  }
  // Across hosts: every process must run this one plan (refused before any I/O otherwise).
  check_same_options(ctx, vm, desc, "raw", PresetFile::kNone);
  RawConfig cfg = build_config(vm);
  std::string json_path = get_string(vm, "json");
  HostInfo host = probe_host();
  comm::Comm& comm = *ctx.comm;
  const bool multi = comm.multi();
  const std::string user_filename = cfg.filename;

  // Each process prepares its own file (raw_cluster.hpp says which); a failure on any host ends
  // the job on every host, naming it. With one process this is the single-host flow.
  std::string files_how;
  RawTarget target;
  TargetInfo tinfo;
  double residency = -1;
  RawEngineChoice choice;
  std::vector<std::string> memlock_warnings;
  bool layout_interrupted = false;
  RemoveCreatedFile remove_created;
  cluster::on_every_host(comm, "prepare the raw target", [&] {
    // Before any work: a file that is not ours is never overwritten, an unwritable place is named.
    if (!json_path.empty() && comm.rank() == 0) check_output_path(json_path, "--json", "raw");
    if (multi) cfg.filename = process_raw_filename(cfg, comm.rank(), &files_how);
    target = prepare_raw_target(cfg);
    if (multi && target.created) remove_created.path = target.path;
    if (interrupted()) {
      if (multi) throw Error(target.note, interrupt_exit_code());
      layout_interrupted = true;
      return;
    }
    tinfo = probe_target(target.block_device ? target.path : dir_of(target.path));
    // Buffered reads of a file just laid out (or read before) would come from memory: evicted
    // first, as the loader's cold mode does, and the residency measured after.
    if (raw_evicts(cfg)) target.evicted = evict_file(target.path);
    residency = target.block_device ? -1.0 : page_cache_residency(target.path, target.region_bytes);
    choice = choose_raw_engine(cfg, tinfo, residency);
    if (!choice.warning.empty()) memlock_warnings.push_back(choice.warning);
    plan_memlock(cfg, host, choice, memlock_warnings);
  });
  if (layout_interrupted) {
    message(target.note);
    return interrupt_exit_code();
  }

  RunHeader header = run_header(ctx.argv, host);  // the run starts now
  const auto devices = raw_device_recorder(tinfo, target.block_device ? target.path : "");
  devices->mark();
  double skew_s = 0;
  RawResults res;
  cluster::ClusterRaw cr;  // across hosts (rank 0): the processes' results merged
  if (!multi) {
    res = run_raw(cfg, target, choice);
    devices->mark();
  } else {
    // Every process starts its clock when the start barrier releases it (--runtime counts from
    // there); a process that fails before the barrier still meets the others there with its error.
    const RawStartHook start = raw_start_on_hosts(comm, kRawBarrierTimeoutS, &skew_s);
    bool started = false;
    std::exception_ptr early;
    try {
      res = run_raw(cfg, target, choice, [&](std::exception_ptr setup) {
        started = true;
        start(std::move(setup));
      });
    } catch (...) {
      if (started) throw;
      early = std::current_exception();
    }
    if (early) start(early);  // throws JobFailure on every process
    // This process's jobs are done: its host's devices from before the start barrier (every
    // process of the host marked before it) to here; the host's last process covers them all.
    devices->mark();
    ctx.job_outcome_shared = true;  // from here on every process learns the outcome
    cluster::RawProcessPart part;
    part.rank = comm.rank();
    part.host_index = comm.host_index();
    part.hostname = comm.hostname();
    part.filename = escape_bytes(cfg.filename);
    part.start_skew_s = skew_s;
    part.target = target_json(tinfo);
    part.result = res;
    part.device_io = devices->whole();
    // A one-pass run ends when the slowest process's pass does: no watchdog on that wait.
    cr = gather_raw(comm, part, cfg.runtime_s > 0, cfg.runtime_s > 0 ? kRawBarrierTimeoutS : 0);
    if (comm.rank() != 0) return share_exit_code(comm, 0);
    res = cr.merged;
    cfg.filename = user_filename;
    for (const auto& h : cr.hosts)
      if (h.result.errors)
        error_message(fmt::format("host {} (rank {}): {}", h.hostname, fmt::join(h.mpi_ranks, ","),
                                  error_line(h.result.first_error)));
  }
  // The document, its warnings and device accounting worked out before anything is printed.
  RawDocument doc = make_raw_document(std::move(header), tinfo, cfg, target, choice, residency, res, memlock_warnings);
  if (multi) add_raw_cluster(doc, cr, comm.launcher(), comm.host_count(), files_how);
  // Across hosts: every host's own devices (its row in Hosts), added for the cluster.
  const DeviceIo io = multi ? cr.device_io : devices->whole();
  const std::string io_line = add_raw_device_io(doc, io, tinfo);

  std::fputs(render_raw_results_text(doc).c_str(), stdout);
  std::fputs(render_raw_hosts_text(doc).c_str(), stdout);
  std::printf("  device I/O  %s%s\n", io_line.c_str(),
              multi ? fmt::format(" ({} host(s)' devices added; each host's in its row above)", io.hosts).c_str() : "");
  for (const auto& w : doc.warnings) std::printf("  warning     %s\n", w.c_str());
  if (!json_path.empty()) {
    write_raw_document(json_path, doc);
    std::printf("  result      %s\n", escape_bytes(json_path).c_str());
  }
  int rc = kExitOk;
  if (interrupted() || (multi && res.partial && res.errors == 0)) {
    // A multi-host run stopped by another host's signal is partial here too.
    rc = interrupt_exit_code() ? interrupt_exit_code() : static_cast<int>(kExitSigint);
  } else if (res.errors) {
    if (!multi) error_message(error_line(res.first_error));
    rc = kExitFailure;
  }
  return multi ? share_exit_code(comm, rc) : rc;
}

}  // namespace ioprobe::cli
