// `ioprobe raw`: fio-like raw file / block device I/O (options, validation, run, report).
#include <libgen.h>

#include <cstdio>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "cli/device_accounting.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "engine/engine.hpp"
#include "engine/uring_memlock.hpp"
#include "raw/raw_config.hpp"
#include "raw/raw_run.hpp"
#include "raw/raw_target.hpp"
#include "report/document.hpp"
#include "report/raw_report.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

namespace {

po::options_description raw_options() {
  po::options_description d("ioprobe raw options");
  auto str = [] { return po::value<std::string>(); };
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
      ("engine", str(), "io_uring | psync | auto (default auto: picked per target, and the report says why)")
      ("runtime", str(), "run this long, wrapping over the region, e.g. 10s (default: one pass over --size)")
      ("sqpoll", str()->implicit_value("1"), "1: ask io_uring for a submission polling thread (default 0)")
      ("allow-overwrite", str()->implicit_value("1"),
       "permit write tests on a file or device ioprobe did not create (destroys its data)")
      ("seed", str(), "seed of the random offsets (default 17519806)")
      ("json", str(), "also write the result document to this file (atomically)");
  return d;
}

RawConfig build_config(const po::variables_map& vm) {
  RawConfig c;
  if (!has(vm, "filename")) throw UsageError("raw: --filename is required (a file or block device path); see --help");
  c.filename = get_string(vm, "filename");
  if (c.filename.empty()) throw UsageError("raw: --filename is empty; give a file or block device path");
  std::string rw = get_choice(vm, "rw", "read", {"read", "randread", "write", "randwrite"});
  c.rw = rw == "read" ? RawPattern::read
         : rw == "randread" ? RawPattern::randread
         : rw == "write" ? RawPattern::write
                         : RawPattern::randwrite;
  c.bs = static_cast<uint32_t>(get_size(vm, "bs", 4096, 1, 64ULL << 20));
  c.iodepth = static_cast<unsigned>(get_count(vm, "iodepth", 1, 1, 4096));
  c.numjobs = static_cast<unsigned>(get_count(vm, "numjobs", 1, 1, 1024));
  c.size = get_size(vm, "size", 0, 0, UINT64_MAX);
  c.direct = get_bool(vm, "direct", false);
  c.engine = get_choice(vm, "engine", "auto", {"io_uring", "psync", "auto"});
  c.runtime_s = get_duration(vm, "runtime", 0);
  c.sqpoll = get_bool(vm, "sqpoll", false);
  c.allow_overwrite = get_bool(vm, "allow-overwrite", false);
  c.seed = get_count(vm, "seed", c.seed, 0, UINT64_MAX);
  if (c.direct && c.bs % kDirectAlign)
    throw UsageError(fmt::format("--bs {}: O_DIRECT needs a multiple of {} B; use e.g. --bs 4k or --direct 0", c.bs,
                                 kDirectAlign));
  if (c.size && c.size < c.bs)
    throw UsageError(fmt::format("--size {} is smaller than --bs {}; give at least one block", c.size, c.bs));
  return c;
}

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
    std::printf("examples:\n"
                "  ioprobe raw --filename /data/t.bin --size 1G --rw randread --bs 4k --iodepth 32 --direct 1 --runtime 10s\n"
                "  ioprobe raw --filename /dev/shm/t.bin --size 1G --rw read --bs 128k --iodepth 16 --runtime 10s\n"
                "tools/bench-fio runs the same jobs under fio and ioprobe side by side.\n");
    return kExitOk;
  }
  RawConfig cfg = build_config(vm);
  std::string json_path = get_string(vm, "json");
  HostInfo host = probe_host();

  RawTarget target = prepare_raw_target(cfg);
  if (interrupted()) {
    std::fprintf(stderr, "ioprobe raw: %s\n", target.note.c_str());
    return interrupt_exit_code();
  }
  TargetInfo tinfo = probe_target(target.block_device ? target.path : dir_of(target.path));
  double residency = target.block_device ? -1.0 : page_cache_residency(target.path, target.region_bytes);
  RawEngineChoice choice = choose_raw_engine(cfg, tinfo, residency);
  // Locked memory: each job's ring (--iodepth entries) and registered buffers count against
  // RLIMIT_MEMLOCK (engine/uring_memlock.hpp); decide before any job starts.
  std::vector<std::string> memlock_warnings;
  if (choice.name == "io_uring") {
    MemlockNeed need;
    need.rings = cfg.numjobs;
    need.ring_bytes = ring_locked_bytes(cfg.iodepth, 2 * cfg.iodepth);
    need.rings_charged = kernel_charges_rings(host.kernel);
    const uint64_t stride = (static_cast<uint64_t>(cfg.bs) + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    // The engine maps its buffers in 2 MiB huge pages (engine.cpp allocate_slots), charged whole.
    need.registered_bytes = cfg.numjobs * registered_locked_bytes(std::max<uint64_t>(kHugePageBytes, stride * cfg.iodepth));
    MemlockPlan plan = apply_memlock_plan(cfg.engine, need, read_memlock_limit(), choice.name, choice.reason,
                                          memlock_warnings);
    if (plan.step == MemlockStep::no_fixed_buffers) cfg.fixed_buffers = false;
  }

  nlohmann::json doc = document_header("raw", ctx.argv, host);
  for (const auto& w : memlock_warnings) doc["warnings"].push_back(w);
  doc["target"] = target_json(tinfo);
  if (choice.name == "psync" && cfg.iodepth > 1)
    doc["warnings"].push_back(fmt::format("psync is synchronous: --iodepth {} runs as 1 request in flight per job",
                                          cfg.iodepth));
  if (tinfo.memory_backed) doc["warnings"].push_back("memory-backed target: this measures RAM copies, not a device");
  if (!cfg.direct && residency >= 0 && residency < 0.9 && residency > 0.05)
    doc["warnings"].push_back(fmt::format("page cache partly warm ({:.0f} %): a mixed cache state", residency * 100));

  const auto devices = raw_device_recorder(tinfo, target.block_device ? target.path : "");
  devices->mark();
  RawResults res = run_raw(cfg, target, choice);
  devices->mark();

  std::fputs(raw_text(cfg, target, choice, residency, res).c_str(), stdout);
  for (const auto& w : doc["warnings"]) std::printf("  warning     %s\n", w.get<std::string>().c_str());
  doc["partial"] = res.partial;
  doc["raw"] = raw_json(cfg, target, choice, residency, res);
  std::printf("  device I/O  %s\n", add_raw_device_io(doc, *devices, res.bytes, pattern_is_write(cfg.rw), tinfo).c_str());
  if (!json_path.empty()) {
    write_json_file(json_path, doc);
    std::printf("  result      %s\n", escape_bytes(json_path).c_str());
  }
  if (interrupted()) return interrupt_exit_code();
  if (res.errors) {
    std::fprintf(stderr, "ioprobe raw: %s\n", res.first_error.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace ioprobe::cli
