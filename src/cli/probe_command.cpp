// `ioprobe probe`: what ioprobe knows about a storage target and this host, without running I/O
// beyond a one-block O_DIRECT probe and a throwaway io_uring ring.
#include <sys/stat.h>
#include <cerrno>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "engine/engine_choice.hpp"
#include "report/document.hpp"
#include "report/probe_document.hpp"
#include "report/probe_text.hpp"
#include "topology/host.hpp"
#include "topology/numa.hpp"
#include "topology/target.hpp"

namespace ioprobe::cli {

namespace {
// Queue depth of probe's "deep" row: raw's buffered reads with requests in flight (--iodepth 32).
constexpr unsigned kProbeDeepDepth = 32;
}  // namespace

int cmd_probe(const CommandContext& ctx) {
  po::options_description desc(
      "ioprobe probe: the storage target (filesystem, mount, device chain, RAID, queue, O_DIRECT), the host's\n"
      "NUMA layout and allowed CPUs, io_uring availability, and the engine a run would choose.\n\n"
      "usage: ioprobe probe [--dir PATH] [--json FILE]\n\noptions");
  // clang-format off
  desc.add_options()                                                                  //
      ("help,h", "print this help")                                                   //
      ("dir", po::value<std::string>(), "directory (or file) to probe (default: the current directory)")  //
      ("json", po::value<std::string>(), "also write the result document to FILE (JSON, written atomically)")  //
      ("sysfs-root", po::value<std::string>(),
       "read NUMA topology from this sysfs tree instead of /sys (recorded fixtures; testing)");
  // clang-format on
  po::variables_map vm = parse_command_line(ctx.args, desc, "probe");
  if (vm.count("help")) {
    std::cout << "usage: ioprobe probe [--dir DIR] [--json FILE]\n\n"
              << desc << "\nExit codes: 0 ok, 2 bad usage or path.\n";
    return kExitOk;
  }
  std::string dir = get_string(vm, "dir", ".");
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    const int e = errno;
    throw UsageError(fmt::format("--dir '{}'{}; give an existing directory on the storage to test", escape_bytes(dir),
                                 e == ENOENT ? " does not exist" : ": " + errno_text(e)));
  }
  // A regular file is probed where it lives (the help says "directory (or file)"), and the report
  // says so; any other non-directory (a device, a socket) would describe /dev's filesystem instead.
  const bool dir_is_file = S_ISREG(st.st_mode);
  if (!dir_is_file && !S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("--dir '{}' is neither a directory nor a regular file; give a directory on the "
                                 "storage to test (for a block device, use ioprobe raw --filename DEVICE)",
                                 escape_bytes(dir)));
  std::string sysfs_root = get_string(vm, "sysfs-root", "/sys");
  if (sysfs_root != "/sys" && stat((sysfs_root + "/devices").c_str(), &st) != 0)
    throw UsageError(
        fmt::format("--sysfs-root '{}' has no devices/ directory; give a sysfs tree", escape_bytes(sysfs_root)));

  // Before any work: a file that is not ours is never overwritten, an unwritable place is named.
  if (vm.count("json")) check_output_path(get_string(vm, "json"), "--json", "probe");
  HostInfo host = probe_host();
  TargetInfo target = probe_target(dir);
  Topology topo = discover(sysfs_root);
  UringAvailability uring = probe_io_uring();
  bool cold_buffered = target.o_direct != 1;
  EngineChoice cold = choose_engine(EngineSelection::kAuto, target, cold_buffered, uring);
  EngineChoice warm = choose_engine(EngineSelection::kAuto, target, true, uring);
  // raw's answer for buffered reads with requests in flight: the same chooser at depth > 1.
  EngineRequest deep_request;
  deep_request.buffered = true;
  deep_request.depth = kProbeDeepDepth;
  EngineChoice deep = choose_engine(deep_request, target, uring);

  const ProbeDocument doc = make_probe_document(run_header(ctx.argv, host), target, topo, uring,
                                                probe_engine_row(cold, cold_buffered), probe_engine_row(warm, true),
                                                probe_engine_row(deep, true, kProbeDeepDepth), host,
                                                dir_is_file ? dir : "");
  std::fputs(render_probe_text(doc).c_str(), stdout);
  if (vm.count("json")) {
    std::string out = get_string(vm, "json");
    write_probe_document(out, doc);
    std::printf("\nJSON written to %s\n", escape_bytes(out).c_str());
  }
  return kExitOk;
}

}  // namespace ioprobe::cli
