#include "scaling/scaling.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "raw/raw_run.hpp"
#include "raw/raw_target.hpp"
#include "topology/block_device.hpp"
#include "topology/target.hpp"

namespace ioprobe {

ScalingExpectation raid_expectation(const std::string& level, size_t members) {
  const double n = static_cast<double>(members);
  ScalingExpectation e;
  if (members == 0) return e;
  if (level.empty() || members == 1) {
    e.factor = 1;
    e.rule = "one device: the file should read at the device's own rate";
  } else if (level == "raid0" || level == "raid10") {
    e.factor = 1;
    e.rule = fmt::format("{} stripes reads over all {} members: up to the sum", level, members);
  } else if (level == "raid1" || level == "raid1c3" || level == "raid1c4") {
    e.factor = 1;
    e.rule = fmt::format("{} reads may come from any copy: up to the sum of {} members with enough readers, one "
                         "member's rate for a single sequential reader",
                         level, members);
  } else if ((level == "raid4" || level == "raid5") && members >= 3) {
    e.factor = (n - 1) / n;
    e.rule = fmt::format("{} over {} members reads {} members' worth of data per stripe: (n-1)/n of the sum", level,
                         members, members - 1);
  } else if (level == "raid6" && members >= 4) {
    e.factor = (n - 2) / n;
    e.rule = fmt::format("raid6 over {} members reads {} members' worth of data per stripe: (n-2)/n of the sum",
                         members, members - 2);
  } else if (level == "single" || level == "linear" || level == "dup") {
    e.factor = 1 / n;
    e.rule = fmt::format("{} places a file's extents on one device at a time: one member's rate, 1/{} of the sum",
                         level, members);
  } else {
    e.rule = fmt::format("no read expectation known for level '{}'", level);
  }
  return e;
}

std::vector<std::string> scaling_members(const TargetInfo& t) {
  if (!t.raid_members.empty()) return t.raid_members;
  if (t.memory_backed || t.device.empty())
    throw UsageError(fmt::format("'{}' is on {} ({}): there is no block device to measure; give a directory on a "
                                 "disk or a RAID array",
                                 escape_bytes(t.path), t.fs_type,
                                 t.memory_backed ? "memory"
                                 : t.network     ? "a network filesystem"
                                                 : "no device"));
  return {t.device};
}

void finish_scaling(ScalingResult& r) {
  r.sum_bytes_per_s = 0;
  r.sum_iops = 0;
  size_t measured = 0;
  for (const auto& m : r.members)
    if (m.error.empty() && m.bytes_per_s > 0) {
      r.sum_bytes_per_s += m.bytes_per_s;
      r.sum_iops += m.iops;
      ++measured;
    }
  r.expectation = raid_expectation(r.level, r.members.size());
  const bool all = measured == r.members.size() && measured > 0;
  r.efficiency = all && r.array.error.empty() && r.array.bytes_per_s > 0 ? r.array.bytes_per_s / r.sum_bytes_per_s : 0;
  r.expected_bytes_per_s = all ? r.expectation.factor * r.sum_bytes_per_s : 0;
  if (!all && !r.members.empty()) r.notes.emplace_back("not every member was measured: no efficiency is claimed");
  if (r.efficiency > 1.05)
    r.notes.push_back(fmt::format("efficiency {:.2f} is above 1: the array read faster than its members together, so "
                                  "a cache served part of its reads (the page cache under loop devices' backing "
                                  "files, a controller or array cache); this is not evidence for the rule",
                                  r.efficiency));
}

namespace {

ScalingPoint measure(const ScalingConfig& cfg, const std::string& name, const std::string& path, uint64_t size,
                     const TargetInfo& target) {
  RawConfig rc;
  rc.filename = path;
  rc.rw = cfg.rw;
  rc.bs = cfg.bs;
  rc.iodepth = cfg.iodepth;
  rc.numjobs = 1;
  rc.size = size;
  rc.direct = true;
  rc.engine = EngineSelection::kAuto;
  rc.runtime_s = cfg.runtime_s;
  rc.progress = cfg.progress;
  ScalingPoint p;
  p.name = name;
  p.path = path;
  RawTarget t = prepare_raw_target(rc);
  if (interrupted()) {
    p.error = "interrupted";
    return p;
  }
  RawEngineChoice engine = choose_raw_engine(rc, target, -1.0);
  RawResults res = run_raw(rc, t, engine);
  p.engine = engine.name;
  p.ios = res.ios;
  p.bytes = res.bytes;
  p.elapsed_s = res.elapsed_s;
  if (res.elapsed_s > 0) {
    p.iops = static_cast<double>(res.ios) / res.elapsed_s;
    p.bytes_per_s = static_cast<double>(res.bytes) / res.elapsed_s;
  }
  p.p50_us = static_cast<double>(res.latency.percentile(50)) / 1e3;
  p.p99_us = static_cast<double>(res.latency.percentile(99)) / 1e3;
  if (res.errors) p.error = error_line(res.first_error);
  return p;
}

std::string dev_path(const std::string& name) {
  std::string path = "/dev/" + name;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw UsageError(fmt::format("member device {} has no node {} ({}); run where /dev shows the array's members "
                                 "(not inside a container without them)",
                                 name, path, std::strerror(errno)));
  if (!S_ISBLK(st.st_mode)) throw UsageError(fmt::format("{} is not a block device", path));
  // Opened, not access()'ed: root passes access() whatever a device cgroup or a security module
  // will do to the open, and the open is what the measurement needs.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    const std::string hint = device_open_hint(path, e, geteuid());
    throw UsageError(fmt::format("cannot open member device {} for reading ({}){}{}; ioprobe only reads it", path,
                                 errno_text(e), hint.empty() ? "" : ": ", hint));
  }
  close(fd);
  return path;
}

// Loop members whose backing files live on one filesystem share its device: read at once, they
// cannot reach the sum of their rates read alone.
void shared_backing_note(const std::vector<std::string>& names, std::vector<std::string>& notes) {
  std::map<dev_t, std::vector<std::string>> by_dev;
  for (const auto& n : names) {
    const std::string backing = describe_block_device_named(n).backing_file;
    struct stat st {};
    if (!backing.empty() && stat(backing.c_str(), &st) == 0) by_dev[st.st_dev].push_back(n);
  }
  for (const auto& [dev, group] : by_dev)
    if (group.size() > 1)
      notes.push_back(fmt::format("members {} are loop devices backed by files on one filesystem (device {}:{}): "
                                  "they share its disk, so the array cannot reach their sum",
                                  fmt::join(group, ", "), major(dev), minor(dev)));
}

}  // namespace

ScalingResult run_scaling(const ScalingConfig& cfg, const TargetInfo& target,
                          const std::function<void(const std::string&)>& progress) {
  ScalingResult r;
  r.raid_kind = target.raid_kind;
  r.level = target.raid_level;
  const std::vector<std::string> names = scaling_members(target);
  std::vector<std::string> paths;
  for (const auto& n : names) paths.push_back(dev_path(n));  // every refusal before any I/O

  std::string file = cfg.file;
  if (file.empty()) {
    file = fmt::format("{}/.ioprobe-scaling-{}.bin", cfg.dir, getpid());
    struct stat st {};
    if (stat(file.c_str(), &st) == 0)
      throw UsageError(
          fmt::format("'{}' exists and ioprobe did not create it now; remove it or give --file", escape_bytes(file)));
  }
  for (size_t i = 0; i < names.size() && !interrupted(); ++i) {
    progress(fmt::format("member {} ({}/{}): {} {} B, iodepth {}, O_DIRECT, {:g} s, read-only", names[i], i + 1,
                         names.size(), pattern_name(cfg.rw), cfg.bs, cfg.iodepth, cfg.runtime_s));
    ScalingPoint p = measure(cfg, names[i], paths[i], 0, target);
    p.nominal = nominal_device_speed(describe_block_device_named(names[i]).disk);
    r.members.push_back(p);
  }
  if (!interrupted()) {
    progress(fmt::format("array through {}{}", escape_bytes(file),
                         cfg.file.empty() ? fmt::format(" (creating {} B, removed after)", cfg.file_bytes)
                                          : " (read-only)"));
    try {
      if (cfg.file.empty()) r.array_file_created = true;  // prepare_raw_target creates it below
      r.array = measure(cfg, "array", file, cfg.file.empty() ? cfg.file_bytes : 0, target);
    } catch (...) {
      if (r.array_file_created) unlink(file.c_str());
      throw;
    }
    if (r.array_file_created && unlink(file.c_str()) != 0)
      r.notes.push_back(
          fmt::format("could not remove {} ({}): remove it by hand", escape_bytes(file), std::strerror(errno)));
  }
  r.interrupted = interrupted();
  shared_backing_note(names, r.notes);
  if (r.members.size() == 1 && r.level.empty() && r.members[0].nominal.bytes_per_s > 0)
    r.notes.push_back(fmt::format("{}: {}", r.members[0].nominal.device_class, r.members[0].nominal.basis));
  finish_scaling(r);
  return r;
}

}  // namespace ioprobe
