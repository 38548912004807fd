// comm::Comm::reduce_tree's binomial tree and the run's merge over it (cluster/run_partial.hpp):
// N ranks as threads of this process over an in-process Comm whose messages are queues; the
// tree's merge on rank 0 must equal the flat gather's (every part to rank 0, merge_parts).
#include <catch2/catch.hpp>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/gather.hpp"
#include "cluster/run_partial.hpp"
#include "cluster/run_parts.hpp"
#include "comm/comm.hpp"

using namespace ioprobe;
using namespace ioprobe::cluster;

namespace {

// Point-to-point queues between the ranks of one in-process job, by (from, to).
struct TreeTestWire {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::pair<int, int>, std::deque<std::string>> queues;
  std::map<int, int> received_from_count;  // rank -> messages it received

  void send(int from, int to, const std::string& bytes) {
    {
      std::lock_guard<std::mutex> g(mu);
      queues[{from, to}].push_back(bytes);
    }
    cv.notify_all();
  }
  std::string recv(int from, int to) {
    std::unique_lock<std::mutex> lk(mu);
    auto& q = queues[{from, to}];
    cv.wait(lk, [&] { return !q.empty(); });
    std::string out = std::move(q.front());
    q.pop_front();
    ++received_from_count[to];
    return out;
  }
};

// One rank of the in-process job: gather (flat) and reduce_tree over TreeTestWire; the
// collectives the run's merge does not use are not needed here.
class TreeTestComm final : public comm::Comm {
 public:
  TreeTestComm(TreeTestWire& wire, int rank, int size) : wire_(wire), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int host_count() const override { return size_; }
  int host_index() const override { return rank_; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  const std::string& launcher() const override { return name_; }
  const std::string& hostname() const override { return name_; }
  void barrier(const char*, double) override {}
  void host_barrier(const char*) override {}
  std::vector<std::string> gather(const std::string& mine, const char*, double) override {
    if (rank_ != 0) {
      wire_.send(rank_, 0, mine);
      return {};
    }
    std::vector<std::string> all = {mine};
    for (int r = 1; r < size_; ++r) all.push_back(wire_.recv(r, 0));
    return all;
  }
  std::vector<std::string> allgather(const std::string&, const char*, double) override { return {}; }
  std::string broadcast(const std::string& value, const char*, double) override { return value; }
  void allreduce_max(int64_t*, int, const char*, double) override {}
  uint64_t reduce_tree(comm::TreeFold& fold, const char*, double) override {
    return comm::binomial_reduce(
        rank_, size_, fold, [&](int to, const std::string& b) { wire_.send(rank_, to, b); },
        [&](int from) { return wire_.recv(from, rank_); });
  }
  [[noreturn]] void abort(int) override { throw std::logic_error("abort"); }

 private:
  TreeTestWire& wire_;
  int rank_, size_;
  std::string name_ = "test";
};

// Rank r's part: its host is r / 2 for the first half and r % 3 after (a host's ranks need not
// be consecutive), 2 GPU ranks x 2 workers, latencies that differ by rank.
ProcessPart tree_part(int r) {
  ProcessPart p;
  p.rank = r;
  p.host_index = r < 4 ? r / 2 : r % 3;
  p.hostname = "h" + std::to_string(p.host_index);
  p.gpu_ranks = 2;
  p.first_rank = static_cast<uint32_t>(2 * r);
  p.start_skew_s = 0.001 * r;
  p.step_exchanges = 100 + static_cast<uint64_t>(r % 3);
  p.exchange_s = 0.01 * (r % 5);
  p.init_s = 0.1 + 0.01 * r;
  p.setup_s = 0.2 + 0.001 * (r % 4);
  p.finish_wait_s = 0.003 * (r % 7);
  p.cpus_allowed = 2;
  p.memory_bytes = 8ULL << 30;
  p.target = {{"fs_type", "ext4"}, {"direct", true}};
  for (int g = 0; g < 2; ++g) {
    RankStats rk;
    rk.rank = 2 * r + g;
    rk.samples = 50 + static_cast<uint64_t>(r) + static_cast<uint64_t>(g);
    rk.bytes = rk.samples * 1000;
    rk.batches = 5;
    rk.elapsed_ns = 1'000'000'000 + 10'000'000LL * r;
    rk.compute_ns = 600'000'000;
    rk.wait_ns = 100'000'000 + 1'000'000LL * r;
    rk.nominal_compute_ns = rk.compute_ns;
    rk.timeline = Timeline(0.5);
    std::vector<WorkerStats> ws(2);
    for (int k = 0; k < 2; ++k) {
      ws[k].rank = rk.rank;
      ws[k].worker = k;
      ws[k].files = rk.samples / 2 + static_cast<uint64_t>(k) * (rk.samples % 2);
      ws[k].bytes = ws[k].files * 1000;
      for (uint64_t i = 0; i < ws[k].files; ++i) ws[k].file_latency.record(1000 + 97 * i * (r + 1));
    }
    LoaderResult one = rank_result(rk, ws, rk.elapsed_ns, 1);
    one.stop = {.kind = LoaderStopKind::kCompleted};
    one.cpu_user_s = 0.25 + 0.01 * r;
    p.result.merge(one);
  }
  return p;
}

struct TreeOutcome {
  ClusterRun flat, tree;
  uint64_t flat_bytes = 0, tree_bytes = 0;
  int tree_messages = 0;
};

// Runs the flat gather and the tree on `n` ranks, each rank a thread.
TreeOutcome run_both(int n) {
  TreeTestWire wire;
  TreeOutcome out;
  std::vector<std::thread> threads;
  std::mutex mu;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      TreeTestComm comm(wire, r, n);
      const ProcessPart mine = tree_part(r);
      const std::vector<std::string> texts = comm.gather(nlohmann::json(mine).dump(), "flat", 0);
      uint64_t got = 0;
      const RunPartial all = reduce_parts(comm, partial_of(mine), "tree", 0, &got);
      if (r != 0) return;
      std::vector<ProcessPart> parts;
      for (size_t i = 0; i < texts.size(); ++i) {
        if (i > 0) out.flat_bytes += texts[i].size();
        parts.push_back(decode_gathered<ProcessPart>(texts[i], static_cast<int>(i), "flat"));
      }
      std::lock_guard<std::mutex> g(mu);
      out.flat = merge_parts(std::move(parts));
      out.tree = finish_partial(all);
      out.tree_bytes = got;
    });
  for (auto& t : threads) t.join();
  // Rank 0 received n - 1 flat parts; what is left over is the tree's.
  out.tree_messages = wire.received_from_count[0] - (n - 1);
  return out;
}

}  // namespace

TEST_CASE("binomial_reduce: rank 0 receives ceil(log2 n) subtrees, every rank's part once", "[cluster][tree]") {
  for (int n : {1, 2, 3, 5, 8, 13}) {
    CAPTURE(n);
    // A fold that lists the ranks it holds: the order on rank 0 must be 0..n-1.
    struct ListFold final : comm::TreeFold {
      std::string held;
      void add(int, const std::string& child) override { held += "," + child; }
      std::string encoded() const override { return held; }
    };
    TreeTestWire wire;
    std::string at_root;
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&, r] {
        TreeTestComm comm(wire, r, n);
        ListFold f;
        f.held = std::to_string(r);
        comm.reduce_tree(f, "t", 0);
        if (r == 0) at_root = f.held;
      });
    for (auto& t : threads) t.join();
    std::string want = "0";
    for (int r = 1; r < n; ++r) want += "," + std::to_string(r);
    CHECK(at_root == want);
    int rounds = 0;
    while ((1 << rounds) < n) ++rounds;
    CHECK(wire.received_from_count[0] == rounds);
  }
}

TEST_CASE("the run's merge over the tree equals the flat gather's", "[cluster][tree]") {
  for (int n : {1, 2, 3, 5, 8, 13}) {
    CAPTURE(n);
    const TreeOutcome o = run_both(n);
    const ClusterRun& f = o.flat;
    const ClusterRun& t = o.tree;
    CHECK(t.mpi_ranks == n);
    CHECK(t.merged.samples == f.merged.samples);
    CHECK(t.merged.bytes == f.merged.bytes);
    CHECK(t.merged.elapsed_ns == f.merged.elapsed_ns);
    CHECK(t.merged.file_latency.buckets() == f.merged.file_latency.buckets());
    CHECK(t.merged.file_latency.percentile(99) == f.merged.file_latency.percentile(99));
    CHECK(t.merged.cpu_user_s == Approx(f.merged.cpu_user_s));
    REQUIRE(t.merged.ranks.size() == f.merged.ranks.size());
    for (size_t i = 0; i < t.merged.ranks.size(); ++i) {
      CHECK(t.merged.ranks[i].rank == f.merged.ranks[i].rank);  // rank order kept
      CHECK(t.merged.ranks[i].wait_ns == f.merged.ranks[i].wait_ns);
    }
    REQUIRE(t.merged.workers.size() == f.merged.workers.size());
    for (size_t i = 0; i < t.merged.workers.size(); ++i) CHECK(t.merged.workers[i].files == f.merged.workers[i].files);
    REQUIRE(t.hosts.size() == f.hosts.size());
    for (size_t h = 0; h < t.hosts.size(); ++h) {
      CAPTURE(h);
      CHECK(t.hosts[h].host_index == f.hosts[h].host_index);
      CHECK(t.hosts[h].mpi_ranks == f.hosts[h].mpi_ranks);
      CHECK(t.hosts[h].samples == f.hosts[h].samples);
      CHECK(t.hosts[h].gpu_ranks == f.hosts[h].gpu_ranks);
      CHECK(t.hosts[h].file_latency_p99_us == f.hosts[h].file_latency_p99_us);
      CHECK(t.hosts[h].au_min == Approx(f.hosts[h].au_min));
      CHECK(t.hosts[h].first_done_s == f.hosts[h].first_done_s);
      CHECK(t.hosts[h].last_done_s == f.hosts[h].last_done_s);
      CHECK(t.hosts[h].cpu_s == Approx(f.hosts[h].cpu_s));
    }
    CHECK(t.warnings == f.warnings);
    CHECK(t.memory_bytes == f.memory_bytes);
    CHECK(t.coordination.init_s == f.coordination.init_s);
    CHECK(t.coordination.setup_s == f.coordination.setup_s);
    CHECK(t.coordination.finish_wait_s == f.coordination.finish_wait_s);
    CHECK(t.coordination.step_exchanges == f.coordination.step_exchanges);
    CHECK(t.coordination.init_s == Approx(0.1 + 0.01 * (n - 1)));  // max over processes
    int rounds = 0;
    while ((1 << rounds) < n) ++rounds;
    CHECK(o.tree_messages == rounds);
    // The per-worker histograms stay behind: rank 0 receives less than every full part.
    if (n >= 3) CHECK(o.tree_bytes < o.flat_bytes);
  }
}
