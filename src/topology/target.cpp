#include "topology/target.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe {

std::string fs_type_name(uint64_t magic) {
  switch (magic) {
    case EXT4_SUPER_MAGIC: return "ext4";  // ext2/3/4 share the magic
    case 0x58465342: return "xfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case TMPFS_MAGIC: return "tmpfs";
    case RAMFS_MAGIC: return "ramfs";
    case NFS_SUPER_MAGIC: return "nfs";
    case 0xFF534D42: return "cifs";
    case 0xFE534D42: return "smb2";
    case 0x65735546: return "fuse";
    case 0x0BD00BD0: return "lustre";
    case 0x19830326: return "beegfs";
    case 0x47504653: return "gpfs";
    case 0x00C36400: return "cephfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case 0x2FC12FC1: return "zfs";
    default: return fmt::format("unknown(0x{:x})", magic);
  }
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
        if (i + k >= s.size() || s[i + k] < '0' || s[i + k] > '7') { ok = false; break; }
        v = v * 8 + (s[i + k] - '0');
      }
      if (ok) { out += static_cast<char>(v); i += 3; continue; }
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
  // Block device behind st_dev, if any: /sys/dev/block/MAJ:MIN -> .../block/<disk>[/<part>].
  std::string sys = fmt::format("/sys/dev/block/{}:{}", major(st.st_dev), minor(st.st_dev));
  char* dev = realpath(sys.c_str(), nullptr);
  if (dev) {
    std::string d = dev;
    free(dev);
    t.device = d.substr(d.rfind('/') + 1);
    // rotational lives on the whole disk: the partition's parent directory holds queue/.
    for (std::string q : {d + "/queue/rotational", d.substr(0, d.rfind('/')) + "/queue/rotational"}) {
      std::ifstream r(q);
      int v;
      if (r >> v) { t.rotational = v; break; }
    }
  }
}

}  // namespace

TargetInfo probe_target(const std::string& path) {
  TargetInfo t;
  t.path = path;
  struct statfs sf {};
  if (statfs(path.c_str(), &sf) != 0)
    throw IoError(errno, "statfs", path, "check that the directory exists and is readable");
  t.fs_magic = static_cast<uint64_t>(sf.f_type);
  t.fs_type = fs_type_name(t.fs_magic);
  t.free_bytes = static_cast<uint64_t>(sf.f_bavail) * sf.f_bsize;
  t.free_inodes = static_cast<uint64_t>(sf.f_ffree);
  read_mountinfo(path, t);
  t.memory_backed = t.fs_type == "tmpfs" || t.fs_type == "ramfs";
  static const char* net[] = {"nfs", "cifs", "smb2", "lustre", "beegfs", "gpfs", "cephfs"};
  for (const char* n : net)
    if (t.fs_type == n) t.network = true;
  if (t.mount_fstype.rfind("fuse.sshfs", 0) == 0 || t.mount_fstype == "fuse.s3fs" || t.mount_fstype == "9p" ||
      t.mount_fstype.rfind("nfs", 0) == 0)
    t.network = true;
  return t;
}

int probe_o_direct(const std::string& file) {
  int fd = open(file.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return -errno;
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, 4096) != 0) {
    close(fd);
    return -ENOMEM;
  }
  ssize_t n = pread(fd, buf, 4096, 0);
  int err = n < 0 ? errno : 0;
  free(buf);
  close(fd);
  return -err;
}

}  // namespace ioprobe
