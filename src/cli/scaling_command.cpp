// `ioprobe scaling`: each member device of an array read alone, then the array; efficiency
// against the RAID level's expectation (scaling/), rendered by report/scaling_report.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "report/document.hpp"
#include "report/scaling_report.hpp"
#include "scaling/scaling.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

namespace {

po::options_description scaling_options() {
  po::options_description d("ioprobe scaling options");
  auto str = [] { return po::value<std::string>(); };
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("dir", str(), "a directory on the array (or single device) to measure; required")
      ("file", str(), "an existing file on it to read for the array figure (read-only); default: ioprobe creates "
                      "a file of --size in --dir and removes it after")
      ("rw", str(), "read | randread (default read); nothing is ever written to a member device")
      ("bs", str(), "bytes per request, a multiple of 4096 (default 128k)")
      ("iodepth", str(), "requests in flight (default 16)")
      ("runtime", str(), "seconds per measurement: each member, then the array (default 5s)")
      ("size", str(), "size of the file ioprobe creates for the array figure (default 1G)")
      ("json", str(), "also write the result document to this file (atomically)")
      ("quiet", str()->implicit_value("true"), "no progress lines (warnings and the report stay)");
  // clang-format on
  return d;
}

ScalingConfig build_config(const po::variables_map& vm) {
  ScalingConfig c;
  if (!has(vm, "dir")) throw UsageError("scaling: --dir is required (a directory on the array); see --help");
  c.dir = get_string(vm, "dir");
  struct stat st {};
  if (stat(c.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("--dir '{}' is not a directory ({}); give a directory on the array to measure",
                                 escape_bytes(c.dir), errno ? std::strerror(errno) : "not a directory"));
  c.file = get_string(vm, "file");
  if (c.file.empty()) {
    // ioprobe creates the array's file in --dir: a --dir it may not write to is refused as a
    // missing one is (exit 2, naming --dir), before any member is measured.
    const std::string probe = fmt::format("{}/.ioprobe-scaling-probe.{}", c.dir, getpid());
    const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
      throw UsageError(
          fmt::format("--dir '{}' is not writable ({}): ioprobe creates the file it reads for the array "
                      "figure there; give a --dir you may write to, or --file with an existing file on the "
                      "array",
                      escape_bytes(c.dir), errno_text(errno)));
    close(fd);
    unlink(probe.c_str());
  } else {
    if (stat(c.file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      throw UsageError(fmt::format("--file '{}' is not an existing regular file; give a file on the array, or leave "
                                   "--file out to let ioprobe create one",
                                   escape_bytes(c.file)));
    struct stat dir_st {};
    if (stat(c.dir.c_str(), &dir_st) == 0 && dir_st.st_dev != st.st_dev)
      throw UsageError(fmt::format("--file '{}' is not on the filesystem of --dir '{}': the array figure must read a "
                                   "file on the array; give a file under --dir, or leave --file out",
                                   escape_bytes(c.file), escape_bytes(c.dir)));
  }
  const std::string rw = get_choice(vm, "rw", "read", {"read", "randread"});
  c.rw = rw == "read" ? RawPattern::read : RawPattern::randread;
  c.bs = static_cast<uint32_t>(get_size(vm, "bs", c.bs, 4096, 64ULL << 20));
  if (c.bs % 4096)
    throw UsageError(
        fmt::format("--bs {}: O_DIRECT needs a multiple of {}; use e.g. 128k", format_bytes(c.bs), format_bytes(4096)));
  c.iodepth = static_cast<unsigned>(get_count(vm, "iodepth", c.iodepth, 1, 4096));
  c.runtime_s = get_duration(vm, "runtime", c.runtime_s);
  if (c.runtime_s <= 0) throw UsageError("--runtime must be above 0, e.g. 5s");
  c.file_bytes = get_size(vm, "size", c.file_bytes, c.bs, UINT64_MAX);
  c.progress = !get_bool(vm, "quiet", false);
  return c;
}

}  // namespace

int cmd_scaling(const CommandContext& ctx) {
  po::options_description desc = scaling_options();
  po::variables_map vm = parse_command_line(ctx.args, desc, "scaling");
  if (vm.count("help")) {
    std::printf("usage: ioprobe scaling --dir DIR [OPTIONS]\n\n"
                "Does the array deliver the sum of its members? Reads each member device alone (read-only, "
                "O_DIRECT),\nthen the array through a file on it, with the same pattern, and prints the scaling "
                "efficiency\n(array / sum of members) beside what the RAID level lets one expect. A single device "
                "is shown\nagainst its interface's nominal speed (NVMe PCIe link, SATA 6 Gb/s). Needs read access to "
                "the\nmember devices (root or the disk group).\n\n");
    std::cout << desc << "\n";
    std::printf("examples:\n"
                "  ioprobe scaling --dir /mnt/raid --rw read --bs 1M --iodepth 16 --runtime 10s\n"
                "  ioprobe scaling --dir /mnt/raid --rw randread --bs 4k --iodepth 64 --file /mnt/raid/big.bin\n\n"
                "Exit codes: 0 ok, 1 a member or the array could not be read, 2 bad usage or path, 130/143\n"
                "  interrupted (partial result).\n");
    return kExitOk;
  }
  ScalingConfig cfg = build_config(vm);
  const std::string json_path = get_string(vm, "json");
  if (vm.count("json") && json_path.empty()) throw UsageError("--json: empty path; give a file name");
  if (!json_path.empty()) check_output_path(json_path, "--json", "scaling");  // before any device is read
  HostInfo host = probe_host();
  TargetInfo target = probe_target(cfg.dir);
  ProgressLine progress(cfg.progress, 0.2, 1e-9);
  ScalingResult r = run_scaling(cfg, target, [&](const std::string& s) { progress.print_line("scaling: " + s); });
  progress.finish();

  ScalingDocument doc;
  doc.header = run_header(ctx.argv, host);
  doc.target = target_section(target);
  doc.partial = r.interrupted;
  doc.scaling = scaling_section(cfg, r);
  std::fputs(render_scaling_text(doc).c_str(), stdout);
  if (!json_path.empty()) {
    write_scaling_document(json_path, doc);
    std::printf("  result      %s\n", escape_bytes(json_path).c_str());
  }
  if (r.interrupted) return interrupt_exit_code();
  bool failed = !r.array.error.empty();
  for (const auto& m : r.members) failed = failed || !m.error.empty();
  return failed ? kExitFailure : kExitOk;
}

}  // namespace ioprobe::cli
