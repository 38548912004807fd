#include <catch2/catch.hpp>

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "sysfs_fixtures.hpp"
#include "topology/block_device.hpp"
#include "topology/btrfs_info.hpp"
#include "topology/target.hpp"

using namespace ioprobe;

TEST_CASE("block device: NVMe partition -> disk with queue facts and node", "[target]") {
  BlockDeviceInfo d = describe_block_device(259, 1, kTwoSocket);
  CHECK(d.name == "nvme0n1p1");
  CHECK(d.disk == "nvme0n1");
  REQUIRE(d.chain.size() == 2);
  CHECK(d.chain[0].kind == "partition");
  CHECK(d.chain[1].name == "nvme0n1");
  CHECK(d.chain[1].kind == "disk");
  CHECK(d.chain[1].detail == "Samsung SSD 980 PRO 2TB");
  CHECK(d.model == "Samsung SSD 980 PRO 2TB");
  CHECK(d.nvme);
  CHECK(d.rotational == 0);
  CHECK(d.logical_block_bytes == 512);
  CHECK(d.physical_block_bytes == 4096);
  CHECK(d.nr_requests == 1023);
  CHECK(d.scheduler == "none");
  CHECK(d.numa_node == 1);
}

TEST_CASE("block device: loop -> backing file, md raid0 -> members", "[target]") {
  BlockDeviceInfo loop = describe_block_device_named("loop0", kTwoSocket);
  REQUIRE(loop.chain.size() == 1);
  CHECK(loop.chain[0].kind == "loop");
  CHECK(loop.backing_file == "/var/tmp/disk image.img");
  CHECK(loop.numa_node == -1);
  CHECK(loop.rotational == 1);

  BlockDeviceInfo md = describe_block_device(9, 0, kTwoSocket);
  CHECK(md.raid_level == "raid0");
  CHECK(md.members == std::vector<std::string>{"loop0", "nvme0n1p1"});
  REQUIRE(md.chain.size() == 4);  // md0, loop0, nvme0n1p1, nvme0n1
  CHECK(md.chain[0].kind == "md");
  CHECK(md.chain[1].kind == "loop");
  CHECK(md.chain[3].name == "nvme0n1");

  CHECK(describe_block_device(8, 99, kTwoSocket).name.empty());
}

TEST_CASE("block device: VM disk with numa_node -1", "[target]") {
  BlockDeviceInfo d = describe_block_device(254, 0, kMinusOne);
  CHECK(d.name == "vda");
  CHECK(d.scheduler == "mq-deadline");
  CHECK(d.numa_node == -1);
  CHECK_FALSE(d.nvme);
}

TEST_CASE("btrfs profiles and members from sysfs", "[target]") {
  BtrfsInfo b = describe_btrfs_fsid("0b1c2d3e-0000-4000-8000-00000000abcd", kTwoSocket);
  CHECK(b.data_profile == "raid0");  // the profile with the most bytes; "single" is a leftover
  CHECK(b.data_profiles == std::vector<std::string>{"raid0", "single"});
  CHECK(b.metadata_profile == "raid1");
  CHECK(b.members == std::vector<std::string>{"loop0", "nvme0n1p1"});
  CHECK(describe_btrfs_fsid("nope", kTwoSocket).fsid.empty());
}

TEST_CASE("selected_scheduler", "[target]") {
  CHECK(selected_scheduler("none [mq-deadline] kyber bfq") == "mq-deadline");
  CHECK(selected_scheduler("[none] mq-deadline") == "none");
  CHECK(selected_scheduler("none") == "none");
}

TEST_CASE("fs magic names and network classification", "[target]") {
  CHECK(fs_type_name(EXT4_SUPER_MAGIC) == "ext4");
  CHECK(fs_type_name(0x58465342) == "xfs");
  CHECK(fs_type_name(BTRFS_SUPER_MAGIC) == "btrfs");
  CHECK(fs_type_name(TMPFS_MAGIC) == "tmpfs");
  CHECK(fs_type_name(NFS_SUPER_MAGIC) == "nfs");
  CHECK(fs_type_name(0xFF534D42) == "cifs");
  CHECK(fs_type_name(0x0BD00BD0) == "lustre");
  CHECK(fs_type_name(0x19830326) == "beegfs");
  CHECK(fs_type_name(0x47504653) == "gpfs");
  CHECK(fs_type_name(0x00C36400) == "cephfs");
  CHECK(fs_type_name(0x65735546) == "fuse");
  CHECK(fs_type_name(0x12345678) == "unknown(0x12345678)");
  CHECK(is_network_fs("nfs4", "nfs4"));
  CHECK(is_network_fs("fuse.sshfs", "fuse.sshfs"));
  CHECK(is_network_fs("lustre", "lustre"));
  CHECK_FALSE(is_network_fs("ext4", "ext4"));
  CHECK_FALSE(is_network_fs("fuse.mergerfs", "fuse.mergerfs"));
  CHECK_FALSE(is_network_fs("tmpfs", "tmpfs"));
}

TEST_CASE("probe_target on the build directory: fs type, O_DIRECT probed, no file left behind", "[target]") {
  char cwd[4096];
  REQUIRE(getcwd(cwd, sizeof cwd));
  TargetInfo t = probe_target(cwd);
  struct statfs sf {};
  REQUIRE(statfs(cwd, &sf) == 0);
  CHECK(t.fs_type == fs_type_name(static_cast<uint64_t>(sf.f_type)));
  CHECK_FALSE(t.mount_point.empty());
  CHECK(t.o_direct != -1);  // the build dir is writable, so the probe always runs
  if (t.o_direct == 0) CHECK(t.o_direct_errno != 0);
  if (t.fs_type == "ext4" || t.fs_type == "xfs") {
    CHECK(t.o_direct == 1);
    CHECK_FALSE(t.device.empty());
    CHECK(t.logical_block_bytes >= 512);
  }
  for (const auto& e : std::filesystem::directory_iterator(cwd))
    CHECK(e.path().filename().string().rfind(".ioprobe-odirect-", 0) != 0);
}

TEST_CASE("probe_file_targets groups files by filesystem and never probes O_DIRECT on a missing file", "[target]") {
  char tmpl[] = "/tmp/ioprobe-ft-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  for (int i = 0; i < 3; ++i) std::ofstream(dir + "/f" + std::to_string(i)) << std::string(8192, 'x');
  std::vector<std::string> paths = {dir + "/gone", dir + "/f0", dir + "/f1", dir + "/f2"};
  std::string shm;
  struct statfs sf {};
  if (statfs("/dev/shm", &sf) == 0 && fs_type_name(static_cast<uint64_t>(sf.f_type)) == "tmpfs" &&
      statfs(tmpl, &sf) == 0 && fs_type_name(static_cast<uint64_t>(sf.f_type)) != "tmpfs") {
    char stmpl[] = "/dev/shm/ioprobe-ft-XXXXXX";
    REQUIRE(mkdtemp(stmpl) != nullptr);
    shm = stmpl;
    std::ofstream(shm + "/r0") << std::string(4096, 'y');
    paths.push_back(shm + "/r0");
  }
  FileTargets ft = probe_file_targets(paths.size(), [&](size_t i) { return paths[i]; });
  CHECK(ft.missing == 1);
  CHECK(ft.first_missing == dir + "/gone");
  CHECK(ft.first_missing_errno == ENOENT);
  REQUIRE(ft.groups.size() == (shm.empty() ? 1u : 2u));
  const TargetShare& disk = ft.groups.front();  // the most bytes
  CHECK(disk.files == 3);
  CHECK(disk.bytes == 3 * 8192);
  CHECK(disk.info.o_direct_probe_file == dir + "/f0");
  CHECK(disk.info.o_direct != -1);  // decided on a file that exists
  if (disk.info.fs_type == "ext4" || disk.info.fs_type == "xfs") CHECK(disk.info.o_direct == 1);
  CHECK(disk.info.path == disk.info.mount_point);
  if (!shm.empty()) {
    const TargetShare& ram = ft.groups.back();
    CHECK(ram.files == 1);
    CHECK(ram.bytes == 4096);
    CHECK(ram.info.fs_type == "tmpfs");
    CHECK(ram.info.memory_backed);
    std::filesystem::remove_all(shm);
  }
  std::filesystem::remove_all(dir);
}
