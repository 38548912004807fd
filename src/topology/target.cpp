#include "topology/target.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <dirent.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "topology/btrfs_info.hpp"

namespace ioprobe {

std::string fs_type_name(uint64_t magic) {
  switch (magic) {
    case EXT4_SUPER_MAGIC:
      return "ext4";  // ext2/3/4 share the magic
    case XFS_SUPER_MAGIC:
      return "xfs";
    case BTRFS_SUPER_MAGIC:
      return "btrfs";
    case TMPFS_MAGIC:
      return "tmpfs";
    case RAMFS_MAGIC:
      return "ramfs";
    case NFS_SUPER_MAGIC:
      return "nfs";
    case 0xFF534D42:
      return "cifs";
    case 0xFE534D42:
      return "smb2";
    case 0x65735546:
      return "fuse";
    case 0x0BD00BD0:
      return "lustre";
    case 0x19830326:
      return "beegfs";
    case 0x47504653:
      return "gpfs";
    case 0x00C36400:
      return "cephfs";
    case OVERLAYFS_SUPER_MAGIC:
      return "overlayfs";
    case 0x2FC12FC1:
      return "zfs";
    case F2FS_SUPER_MAGIC:
      return "f2fs";
    case V9FS_MAGIC:
      return "9p";
    case SQUASHFS_MAGIC:
      return "squashfs";
    case MSDOS_SUPER_MAGIC:
      return "vfat";
    case 0x2011BAB0:
      return "exfat";
    case 0xCA451A4E:
      return "bcachefs";
    default:
      return fmt::format("unknown(0x{:x})", magic);
  }
}

bool is_network_fs(const std::string& fs_type, const std::string& mount_fstype) {
  static const char* kNet[] = {"nfs",    "nfs4", "cifs",   "smb2", "smb3", "lustre",
                               "beegfs", "gpfs", "cephfs", "ceph", "9p"};
  for (const char* n : kNet)
    if (fs_type == n || mount_fstype == n) return true;
  // FUSE clients of remote stores. Local FUSE filesystems (mergerfs over local disks, ntfs-3g) are
  // not listed; mergerfs over sshfs shows up as the sshfs mount when probed at the branch.
  static const char* kNetFuse[] = {"fuse.sshfs",     "fuse.s3fs",      "fuse.gcsfuse",       "fuse.rclone",
                                   "fuse.glusterfs", "fuse.juicefs",   "fuse.ceph-fuse",     "fuse.goofys",
                                   "fuse.blobfuse",  "fuse.blobfuse2", "fuse.mountpoint-s3", "fuse.weka"};
  for (const char* n : kNetFuse)
    if (mount_fstype == n) return true;
  return false;
}

namespace {

// Unescapes mountinfo's octal escapes ("\040" for space).
std::string unescape_mountinfo(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (int k = 1; k <= 3; ++k) {
        if (i + k >= s.size() || s[i + k] < '0' || s[i + k] > '7') {
          ok = false;
          break;
        }
        v = v * 8 + (s[i + k] - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

void read_mountinfo(const std::string& path, TargetInfo& t) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  size_t best_len = 0;
  char* real = realpath(path.c_str(), nullptr);
  std::string abs = real ? real : path;
  free(real);
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string id, parent, majmin, root, mnt, opts;
    ls >> id >> parent >> majmin >> root >> mnt >> opts;
    mnt = unescape_mountinfo(mnt);
    unsigned maj = 0, min = 0;
    if (sscanf(majmin.c_str(), "%u:%u", &maj, &min) != 2) continue;
    if (makedev(maj, min) != st.st_dev) continue;
    bool prefix = abs == mnt || mnt == "/" || abs.rfind(mnt + "/", 0) == 0;
    if (!prefix || mnt.size() < best_len) continue;
    best_len = mnt.size();
    std::string tok, fstype, source, super;
    while (ls >> tok && tok != "-") {
    }
    ls >> fstype >> source >> super;
    t.mount_point = mnt;
    t.mount_fstype = fstype;
    t.mount_source = unescape_mountinfo(source);
    t.mount_options = opts;
  }
}

// Copies the device facts of `d` into `t` (not the chain).
void take_device_facts(const BlockDeviceInfo& d, TargetInfo& t) {
  t.device = d.name;
  t.disk = d.disk;
  t.backing_file = d.backing_file;
  t.rotational = d.rotational;
  t.logical_block_bytes = d.logical_block_bytes;
  t.physical_block_bytes = d.physical_block_bytes;
  t.nr_requests = d.nr_requests;
  t.scheduler = d.scheduler;
  t.device_model = d.model;
  t.nvme = d.nvme;
  t.device_numa_node = d.numa_node;
  if (!d.raid_level.empty()) {
    t.raid_kind = "md";
    t.raid_level = d.raid_level;
    t.raid_members = d.members;
  }
}

void probe_devices(const std::string& path, TargetInfo& t) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;
  BlockDeviceInfo d = describe_block_device(major(st.st_dev), minor(st.st_dev));
  // btrfs (and other multi-device filesystems) report an anonymous st_dev: use the mount source.
  struct stat src {};
  if (d.name.empty() && t.mount_source.rfind("/dev/", 0) == 0 && stat(t.mount_source.c_str(), &src) == 0 &&
      S_ISBLK(src.st_mode))
    d = describe_block_device(major(src.st_rdev), minor(src.st_rdev));

  if (t.fs_type == "btrfs") {
    BtrfsInfo b = describe_btrfs(path, t.mount_source);
    if (!b.fsid.empty() && !b.members.empty()) {
      t.raid_kind = "btrfs";
      t.raid_level = b.data_profile;
      t.raid_metadata_level = b.metadata_profile;
      t.raid_members = b.members;
      t.device_chain.push_back({"btrfs " + b.fsid, "btrfs", b.data_profile});
      int rotational = -1;
      for (size_t i = 0; i < b.members.size(); ++i) {
        BlockDeviceInfo m = describe_block_device_named(b.members[i]);
        if (i == 0) {
          take_device_facts(m, t);
          t.raid_kind = "btrfs";  // take_device_facts must not turn this into md
          t.raid_level = b.data_profile;
          t.raid_members = b.members;
        }
        rotational = std::max(rotational, m.rotational);
        t.device_chain.insert(t.device_chain.end(), m.chain.begin(), m.chain.end());
      }
      t.rotational = rotational;
      return;
    }
  }
  if (d.name.empty()) return;
  take_device_facts(d, t);
  t.device_chain = d.chain;
  const LoopBacking lb = loop_backing(d.name);
  if (!lb.loop.empty()) {
    t.backing_device = lb.device;
    t.loop_direct_io = lb.direct_io;
  }
}

// A file to probe O_DIRECT with: `path` itself when a regular file, else the first regular file of
// at least 4 KiB among the first 64 entries of the directory (a bounded look: on a network
// filesystem each stat is a round trip, and a run probes O_DIRECT on its own first file anyway).
std::string existing_probe_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  if (S_ISREG(st.st_mode)) return path;
  if (!S_ISDIR(st.st_mode)) return "";
  DIR* d = opendir(path.c_str());
  if (!d) return "";
  std::string found;
  int seen = 0;
  while (dirent* e = readdir(d)) {
    if (++seen > 64) break;
    if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
    std::string f = path + "/" + e->d_name;
    struct stat fs {};
    if (stat(f.c_str(), &fs) == 0 && S_ISREG(fs.st_mode) && fs.st_size >= 4096) {
      found = f;
      break;
    }
  }
  closedir(d);
  return found;
}

void probe_direct_io(const std::string& path, TargetInfo& t, bool allow_temp_file) {
  std::string file = existing_probe_file(path);
  std::string temp;
  if (file.empty()) {
    if (!allow_temp_file) return;  // the user's data directory: never write there
    std::string tmpl = path + "/.ioprobe-odirect-XXXXXX";
    int fd = mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0) return;  // read-only and empty: o_direct stays -1 (not probed)
    std::string block(4096, 'x');
    bool ok = write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size());
    close(fd);
    temp = tmpl;
    if (!ok) {
      unlink(temp.c_str());
      return;
    }
    file = temp;
  }
  auto [mem, off] = dio_alignment(file);
  t.dio_mem_align_bytes = mem;
  t.dio_offset_align_bytes = off;
  int rc = probe_o_direct(file);
  // EACCES, ENOENT...: the file (this user may not open it), not the filesystem: not probed.
  if (rc != 0 && rc != -EINVAL && rc != -EOPNOTSUPP && rc != -ENOTSUP) {
    if (!temp.empty()) unlink(temp.c_str());
    return;
  }
  t.o_direct = rc == 0 ? 1 : 0;
  t.o_direct_errno = -rc;
  t.o_direct_probe_file = temp.empty() ? file : "(temporary file)";
  if (!temp.empty()) unlink(temp.c_str());
}

// statfs, mountinfo and the device chain of `path` (no O_DIRECT probe, no warnings).
TargetInfo probe_facts(const std::string& path) {
  TargetInfo t;
  t.path = path;
  struct statfs sf {};
  if (statfs(path.c_str(), &sf) != 0)
    throw IoError(errno, "statfs", path, "check that the directory exists and is readable");
  t.fs_magic = static_cast<uint64_t>(sf.f_type);
  t.fs_type = fs_type_name(t.fs_magic);
  t.free_bytes = static_cast<uint64_t>(sf.f_bavail) * sf.f_bsize;
  t.free_known = sf.f_blocks > 0;
  t.free_inodes = static_cast<uint64_t>(sf.f_ffree);
  read_mountinfo(path, t);
  // FUSE and NFS: mountinfo names the flavour ("fuse.sshfs", "nfs4") that the magic cannot.
  if ((t.fs_type == "fuse" && t.mount_fstype.rfind("fuse", 0) == 0) || (t.fs_type == "nfs" && !t.mount_fstype.empty()))
    t.fs_type = t.mount_fstype;
  t.memory_backed = t.fs_type == "tmpfs" || t.fs_type == "ramfs";
  t.network = is_network_fs(t.fs_type, t.mount_fstype);
  probe_devices(path, t);
  return t;
}

// The report's warnings about `t`, naming it by t.path.
void add_warnings(TargetInfo& t) {
  const std::string& path = t.path;
  if (t.memory_backed)
    t.warnings.push_back(fmt::format("{} is {} (RAM): results measure memory copies, not a storage device",
                                     escape_bytes(path), t.fs_type));
  if (t.network)
    t.warnings.push_back(fmt::format(
        "{} is a network filesystem ({}): the client caches file data in local RAM, so re-reads (later epochs) "
        "may never reach the server; measure cold (O_DIRECT where accepted, or evict between epochs) and with a "
        "dataset larger than client RAM",
        escape_bytes(path), t.fs_type));
  if (t.o_direct == 0)
    t.warnings.push_back(
        fmt::format("O_DIRECT refused on {} (probed on {}): {}; cold runs must evict the page cache instead", t.fs_type,
                    t.o_direct_probe_file == "(temporary file)" ? "a temporary file"
                                                                : escape_bytes(t.o_direct_probe_file),
                    errno_text(t.o_direct_errno)));
}

// An O_DIRECT failure that says something about the filesystem, not about the file itself.
bool is_direct_refusal(int err) { return err == EINVAL || err == EOPNOTSUPP || err == ENOTSUP; }

}  // namespace

TargetInfo probe_target(const std::string& path, bool allow_temp_file) {
  TargetInfo t = probe_facts(path);
  probe_direct_io(path, t, allow_temp_file);
  add_warnings(t);
  return t;
}

FileTargets probe_file_targets(size_t count, const std::function<std::string(size_t)>& path_of) {
  constexpr size_t kMaxCandidates = 8;
  struct Group {
    TargetShare share;
    std::vector<std::string> large, small;  // probe candidates: >= 4 KiB first, then smaller ones
  };
  FileTargets out;
  std::vector<Group> groups;
  for (size_t i = 0; i < count; ++i) {
    const std::string p = path_of(i);
    struct stat st {};
    const int rc = stat(p.c_str(), &st);
    if (rc == 0 && !S_ISREG(st.st_mode)) {
      if (out.not_regular.empty())
        out.first_not_regular_kind = S_ISFIFO(st.st_mode)   ? "a FIFO (named pipe)"
                                     : S_ISDIR(st.st_mode)  ? "a directory"
                                     : S_ISCHR(st.st_mode)  ? "a character device"
                                     : S_ISBLK(st.st_mode)  ? "a block device"
                                     : S_ISSOCK(st.st_mode) ? "a socket"
                                                            : "not a regular file";
      out.not_regular.push_back(i);
      continue;
    }
    if (rc != 0) {
      if (out.missing++ == 0) {
        out.first_missing = p;
        out.first_missing_errno = rc != 0 ? errno : 0;
      }
      continue;
    }
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.share.device == st.st_dev; });
    if (g == groups.end()) {
      groups.emplace_back();
      g = groups.end() - 1;
      g->share.device = st.st_dev;
    }
    ++g->share.files;
    g->share.bytes += static_cast<uint64_t>(st.st_size);
    auto& cand = st.st_size >= 4096 ? g->large : g->small;
    if (cand.size() < kMaxCandidates) cand.push_back(p);
  }
  for (Group& g : groups) {
    std::vector<std::string> cand = g.large;
    cand.insert(cand.end(), g.small.begin(), g.small.end());
    TargetInfo t = probe_facts(cand.front());
    for (const std::string& f : cand) {
      auto [mem, off] = dio_alignment(f);
      const int rc = probe_o_direct(f);
      if (rc != 0 && !is_direct_refusal(-rc)) continue;  // the file, not the filesystem: try the next one
      t.dio_mem_align_bytes = mem;
      t.dio_offset_align_bytes = off;
      t.o_direct = rc == 0 ? 1 : 0;
      t.o_direct_errno = -rc;
      t.o_direct_probe_file = f;
      break;
    }
    if (!t.mount_point.empty()) t.path = t.mount_point;
    add_warnings(t);
    g.share.info = std::move(t);
    out.groups.push_back(std::move(g.share));
  }
  std::stable_sort(out.groups.begin(), out.groups.end(), [](const TargetShare& a, const TargetShare& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.files > b.files;
  });
  return out;
}

}  // namespace ioprobe
