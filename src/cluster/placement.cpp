#include "cluster/placement.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "cluster/collective.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe::cluster {

namespace {

std::string parent_of(const std::string& dir) {
  std::filesystem::path p(dir);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();  // "a/b/" -> "a/b"
  std::filesystem::path parent = p.parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

Placement detect_generated(comm::Comm& comm, const std::string& dir, bool create_parent) {
  Placement pl;
  if (!comm.multi()) return pl;
  // Rank 0 names a marker and creates it beside the dataset directory (its parent must exist on
  // rank 0's host; the dataset directory itself may not exist yet).
  // Nothing is created but the marker: where it cannot be made (the parent is missing or not
  // writable) the placement stays undetermined, rank 0 prepares first, and its own preflight
  // names what is wrong.
  std::string marker, why_not;
  if (comm.rank() == 0) {
    std::random_device rd;
    const std::string parent = parent_of(dir);
    if (create_parent) {
      std::error_code ec;
      std::filesystem::create_directories(parent, ec);  // failure: the marker below says why
    }
    marker = fmt::format("{}/.ioprobe-placement-{}-{:08x}", parent, getpid(), rd());
    const int fd = open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
      why_not = fmt::format("rank 0 could not create a marker in '{}': {}", escape_bytes(parent), errno_text(errno));
      marker.clear();
    } else {
      close(fd);
    }
  }
  marker = comm.broadcast(marker, "placement marker", 0);
  why_not = comm.broadcast(why_not, "placement marker", 0);
  if (marker.empty()) {
    pl.kind = "shared";
    pl.how = "not determined (" + why_not + "): rank 0 prepares the dataset first, the others reuse it";
    return pl;
  }
  const bool seen = access(marker.c_str(), F_OK) == 0;
  const std::vector<std::string> seen_by = comm.allgather(fmt::format("{} {}", seen ? 1 : 0, comm.hostname()),
                                                          "placement check", 0);
  if (comm.rank() == 0) unlink(marker.c_str());
  // Hosts other than rank 0's: all see it (shared), none does (node-local), or a mix (refused).
  int yes = 0, no = 0;
  std::string yes_hosts, no_hosts;
  std::vector<std::string> hosts = comm.allgather(std::to_string(comm.host_index()), "placement check", 0);
  for (size_t r = 0; r < seen_by.size(); ++r) {
    if (hosts[r] == hosts[0]) continue;  // rank 0's own host sees its own marker either way
    const bool s = seen_by[r][0] == '1';
    (s ? yes : no)++;
    std::string& list = s ? yes_hosts : no_hosts;
    const std::string name = seen_by[r].substr(2);
    if (list.find(name) == std::string::npos) list += (list.empty() ? "" : ", ") + name;
  }
  if (yes && no)
    throw JobFailure(comm.rank() == 0 ? fmt::format("the dataset directory '{}' is shared with some hosts ({}) but not "
                                                    "with others ({}): give every host the same shared directory, or "
                                                    "each its own local one",
                                                    escape_bytes(dir), yes_hosts, no_hosts)
                                      : "",
                     kExitUsage);
  if (comm.host_count() == 1) {
    pl.kind = "shared";
    pl.how = "one host: every process reads the same directory";
  } else if (yes) {
    pl.kind = "shared";
    pl.how = "every host saw a marker file rank 0 created beside the dataset directory";
    pl.split_generation = true;
  } else {
    pl.kind = "node-local";
    pl.how =
        "no other host saw the marker file rank 0 created beside the dataset directory: each host has its own copy";
  }
  return pl;
}

Placement detect_user_files(comm::Comm& comm, const std::string& fs_type, bool network) {
  Placement pl;
  if (!comm.multi()) return pl;
  const std::vector<std::string> all = comm.allgather(fmt::format("{} {}", network ? 1 : 0, fs_type), "placement check",
                                                      0);
  int net = 0;
  for (const auto& s : all) net += s[0] == '1';
  if (comm.host_count() == 1) {
    pl.kind = "shared";
    pl.how = "one host: every process reads the same files";
  } else if (net == static_cast<int>(all.size())) {
    pl.kind = "shared";
    pl.how = fmt::format("every host reads them on a network filesystem ({})", fs_type);
  } else {
    pl.kind = "node-local";
    pl.how = net ? "some hosts read them on a network filesystem and some on a local one: treated as copies"
                 : fmt::format("every host reads them on a local filesystem ({} here): each host its own copy",
                               fs_type);
  }
  return pl;
}

void prepare_in_order(comm::Comm& comm, const Placement& placement, const std::function<void(bool first)>& prepare) {
  if (!comm.multi()) {
    prepare(true);
    return;
  }
  const bool first = placement.kind == "node-local" ? comm.local_rank() == 0 : comm.rank() == 0;
  on_every_host(comm,
                placement.kind == "node-local"
                    ? "preparing the dataset: each host's first process, before the others try"
                    : "preparing the dataset: rank 0, before the others try",
                [&] {
                  if (first) prepare(true);
                });
  on_every_host(comm, "reusing the dataset prepared for them", [&] {
    if (!first) prepare(false);
  });
}

void check_same_dataset(comm::Comm& comm, const std::string& fingerprint, const std::string& what) {
  if (!comm.multi()) return;
  const std::vector<std::string> all = comm.allgather(fingerprint, "compare the datasets", 0);
  const std::vector<std::string> hosts = comm.allgather(comm.hostname(), "compare the datasets", 0);
  std::string differ;
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) differ += fmt::format("\n  host {} (rank {}): {}", hosts[r], r, all[r]);
  if (!differ.empty())
    throw JobFailure(comm.rank() == 0 ? fmt::format("the hosts do not see the same {} (host {}, rank 0: {}):{}\n"
                                                    "every host must read the same files (a shared directory, or "
                                                    "identical copies at the same path)",
                                                    what, hosts[0], all[0], differ)
                                      : "",
                     kExitUsage);
}

}  // namespace ioprobe::cluster
