// The recorded sysfs trees under tests/fixtures/sysfs/ that several unit tests read (NUMA, block
// devices, GPUs, RAID members): one name per tree, shared by the tests.
#pragma once

#include <string>

/// Two sockets, an NVMe drive and a GPU on node 1.
inline const std::string kTwoSocket = std::string(IOPROBE_FIXTURES) + "/sysfs/two-socket-nvme-gpu-node1";
/// A host whose devices report numa_node -1 (no affinity known).
inline const std::string kMinusOne = std::string(IOPROBE_FIXTURES) + "/sysfs/numa-minus-one";
