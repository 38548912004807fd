// MpiComm: the Comm of a job that mpirun / srun started, over MPI's C API. Built only when CMake
// finds MPI (CMakeLists.txt adds this file and defines IOPROBE_HAVE_MPI for comm.cpp).
#include <dlfcn.h>
#include <glob.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "comm/comm.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/message.hpp"

namespace ioprobe::comm {

namespace {

std::string processor_name() {
  char buf[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  MPI_Get_processor_name(buf, &len);
  return std::string(buf, static_cast<size_t>(len));
}

#ifdef OPEN_MPI
// Whether this Open MPI can be a client of Slurm's PMI-2 server: Open MPI 4 configured --with-pmi
// has the pmix "s2" component, a plugin file mca_pmix_s2.so in its component folder (upstream
// PREFIX/lib/openmpi, Debian's .../openmpi/lib/openmpi3) or linked in when built --disable-dlopen.
// Debian 12's Open MPI 4.1 has none (ompi_info: pmix ext3x, flux, isolated); Open MPI 5 has no PMI-2.
bool open_mpi_speaks_pmi2() {
  if (dlsym(RTLD_DEFAULT, "mca_pmix_s2_component")) return true;
  Dl_info info{};
  void* init = dlsym(RTLD_DEFAULT, "MPI_Init");
  if (!init || !dladdr(init, &info) || !info.dli_fname) return false;
  std::error_code ec;
  const std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);
  if (ec) return false;
  glob_t g{};
  const bool found = glob((lib.parent_path() / "openmpi*" / "mca_pmix_s2.so").c_str(), 0, nullptr, &g) == 0 &&
                     g.gl_pathc > 0;
  globfree(&g);
  return found;
}
#endif

// Finalizes MPI at exit, after main returned (ranks that leave through exit() too).
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// Tags of the watchdog's roll call (on a communicator of its own, so nothing else receives them).
constexpr int kQueryTag = 7101, kAnswerTag = 7102;
// Tag of reduce_tree's messages on MPI_COMM_WORLD (nothing else sends point-to-point there).
constexpr int kTreeTag = 7201;
// How long a rank whose collective timed out waits for the others' answers.
constexpr int64_t kRollCallNs = 2'000'000'000;
// How often the watchdog looks for a roll call, and for a deadline a collective armed, while
// nothing times out (a deadline is noticed up to this late: nothing next to a timeout of seconds).
constexpr int64_t kPollNs = 100'000'000;

class MpiComm final : public Comm {
 public:
  MpiComm(const LaunchInfo& li, bool thread_multiple) : launcher_(li.launcher), roll_call_(thread_multiple) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    hostname_ = processor_name();
    // Every rank's hostname, for the watchdog's messages.
    std::vector<char> names(static_cast<size_t>(size_) * (MPI_MAX_PROCESSOR_NAME + 1), '\0');
    std::string mine = hostname_;
    mine.resize(MPI_MAX_PROCESSOR_NAME + 1, '\0');
    MPI_Allgather(mine.data(), MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR,
                  MPI_COMM_WORLD);
    for (int r = 0; r < size_; ++r)
      hosts_.emplace_back(names.data() + static_cast<size_t>(r) * (MPI_MAX_PROCESSOR_NAME + 1));
    MPI_Comm_dup(MPI_COMM_WORLD, &watch_comm_);
    // Hosts: the ranks that share memory. Host numbers follow the lowest rank of each host.
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host_);
    MPI_Comm_rank(host_, &local_rank_);
    MPI_Comm_size(host_, &local_size_);
    int leader = local_rank_ == 0 ? 1 : 0, before = 0;
    MPI_Exscan(&leader, &before, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
    host_index_ = before;
    MPI_Bcast(&host_index_, 1, MPI_INT, 0, host_);
    MPI_Allreduce(&leader, &host_count_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    watchdog_ = std::thread([this] { watch(); });
  }
  ~MpiComm() override {
    {
      std::lock_guard<std::mutex> g(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
    if (host_ != MPI_COMM_NULL) MPI_Comm_free(&host_);
    for (auto& a : answers_)
      if (a.second != MPI_REQUEST_NULL) MPI_Request_free(&a.second);
    if (watch_comm_ != MPI_COMM_NULL) MPI_Comm_free(&watch_comm_);
    finalize_at_exit();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int host_count() const override { return host_count_; }
  int host_index() const override { return host_index_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  const std::string& launcher() const override { return launcher_; }
  const std::string& hostname() const override { return hostname_; }

  void barrier(const char* step, double timeout_s) override {
    Watch w(*this, step, timeout_s);
    MPI_Request req;
    check(MPI_Ibarrier(MPI_COMM_WORLD, &req), step);
    wait_idle(req, step);
  }
  void host_barrier(const char* step) override { check(MPI_Barrier(host_), step); }  // not counted: host-local

  std::vector<std::string> gather(const std::string& mine, const char* step, double timeout_s) override {
    return gather_impl(mine, step, timeout_s, false);
  }
  std::vector<std::string> allgather(const std::string& mine, const char* step, double timeout_s) override {
    return gather_impl(mine, step, timeout_s, true);
  }
  std::string broadcast(const std::string& value, const char* step, double timeout_s) override {
    Watch w(*this, step, timeout_s);
    long long n = static_cast<long long>(value.size());
    check(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), step);
    std::string out = rank_ == 0 ? value : std::string(static_cast<size_t>(n), '\0');
    if (n > 0) check(MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD), step);
    return out;
  }
  void allreduce_max(int64_t* values, int n, const char* step, double timeout_s) override {
    Watch w(*this, step, timeout_s);
    MPI_Request req;
    check(MPI_Iallreduce(MPI_IN_PLACE, values, n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &req), step);
    wait_idle(req, step);
  }
  uint64_t reduce_tree(TreeFold& fold, const char* step, double timeout_s) override {
    Watch w(*this, step, timeout_s);
    const auto send = [&](int to, const std::string& bytes) {
      if (bytes.size() > static_cast<size_t>(INT32_MAX))
        throw Error(fmt::format("MPI step '{}': {} bytes is too large for one message", step, bytes.size()),
                    kExitFailure);
      MPI_Request req;
      check(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, to, kTreeTag, MPI_COMM_WORLD, &req),
            step);
      wait_idle(req, step);
    };
    const auto recv = [&](int from) {
      // Waits for the message without spinning (as wait_idle), then takes it at its size.
      int64_t pause_ns = 20000;
      MPI_Status st;
      for (;;) {
        int flag = 0;
        check(MPI_Iprobe(from, kTreeTag, MPI_COMM_WORLD, &flag, &st), step);
        if (flag) break;
        sleep_until_ns(now_ns() + pause_ns);
        pause_ns = std::min<int64_t>(pause_ns * 2, 250000);
      }
      int n = 0;
      MPI_Get_count(&st, MPI_CHAR, &n);
      std::string buf(static_cast<size_t>(std::max(0, n)), '\0');
      check(MPI_Recv(buf.data(), n, MPI_CHAR, from, kTreeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), step);
      return buf;
    };
    return binomial_reduce(rank_, size_, fold, send, recv);
  }
  [[noreturn]] void abort(int exit_code) override {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
  }

 private:
  // Marks one collective (every rank counts them alike: the same number means the same step) and
  // arms the watchdog for it when it has a timeout.
  struct Watch {
    Watch(MpiComm& c, const char* step, double timeout_s) : c_(c) {
      std::lock_guard<std::mutex> g(c_.mu_);
      ++c_.seq_;
      c_.step_ = step;
      c_.in_collective_ = true;
      if (timeout_s <= 0) return;
      c_.deadline_ns_ = now_ns() + static_cast<int64_t>(timeout_s * 1e9);
      c_.timeout_s_ = timeout_s;
      // No notify: the watchdog looks at the deadline at least every kPollNs (a timeout is
      // seconds), so a DDP step does not wake a second thread (and, with MPI_THREAD_MULTIPLE,
      // its MPI_Iprobe beside this thread's MPI_Test) tens of times a second.
    }
    ~Watch() {
      std::lock_guard<std::mutex> g(c_.mu_);
      c_.deadline_ns_ = 0;
      c_.in_collective_ = false;
    }
    MpiComm& c_;
  };

  // This rank's state for a roll call: "<collective number> <1 when inside it> <step>".
  std::string state_locked() const { return fmt::format("{} {} {}", seq_, in_collective_ ? 1 : 0, step_); }

  // Answers every pending roll call (the watchdog thread; MPI_THREAD_MULTIPLE only).
  void answer_queries_locked() {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, watch_comm_, &flag, &st);
      if (!flag) break;
      long long q = 0;
      MPI_Recv(&q, 1, MPI_LONG_LONG, st.MPI_SOURCE, kQueryTag, watch_comm_, MPI_STATUS_IGNORE);
      answers_.emplace_back(std::make_unique<std::string>(state_locked()), MPI_REQUEST_NULL);
      auto& a = answers_.back();
      MPI_Isend(a.first->data(), static_cast<int>(a.first->size()), MPI_CHAR, st.MPI_SOURCE, kAnswerTag, watch_comm_,
                &a.second);
    }
    // Sent answers whose send completed release their buffers.
    for (auto it = answers_.begin(); it != answers_.end();) {
      int done = 0;
      MPI_Test(&it->second, &done, MPI_STATUS_IGNORE);
      it = done ? answers_.erase(it) : std::next(it);
    }
  }

  // Asks every other rank where it is, for up to kRollCallNs, and names the ranks that did not
  // arrive at collective `seq` with what each is doing (or that it did not answer: gone).
  std::string roll_call_locked(long long seq) {
    std::vector<MPI_Request> reqs(static_cast<size_t>(size_), MPI_REQUEST_NULL);
    for (int r = 0; r < size_; ++r)
      if (r != rank_) MPI_Isend(&seq, 1, MPI_LONG_LONG, r, kQueryTag, watch_comm_, &reqs[static_cast<size_t>(r)]);
    std::vector<std::string> said(static_cast<size_t>(size_));
    int got = 0;
    const int64_t until = now_ns() + kRollCallNs;
    while (got < size_ - 1 && now_ns() < until) {
      answer_queries_locked();  // the others may be asking too
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kAnswerTag, watch_comm_, &flag, &st);
      if (!flag) {
        sleep_until_ns(now_ns() + 5'000'000);
        continue;
      }
      int n = 0;
      MPI_Get_count(&st, MPI_CHAR, &n);
      std::string buf(static_cast<size_t>(std::max(0, n)), '\0');
      MPI_Recv(buf.data(), n, MPI_CHAR, st.MPI_SOURCE, kAnswerTag, watch_comm_, MPI_STATUS_IGNORE);
      if (said[static_cast<size_t>(st.MPI_SOURCE)].empty()) ++got;
      said[static_cast<size_t>(st.MPI_SOURCE)] = buf.empty() ? "0 0 ?" : buf;
    }
    std::string missing;
    int count = 0;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const std::string& a = said[static_cast<size_t>(r)];
      long long their = -1;
      int inside = 0, used = 0;
      std::sscanf(a.c_str(), "%lld %d %n", &their, &inside, &used);
      if (!a.empty() && their == seq && inside) continue;  // arrived
      ++count;
      const std::string who = fmt::format("rank {} (host {})", r, hosts_[static_cast<size_t>(r)]);
      const std::string step = used > 0 ? a.substr(static_cast<size_t>(used)) : "?";
      std::string what = a.empty() ? fmt::format("no answer in {:.0f} s (gone, killed or its host unreachable)",
                                                 kRollCallNs / 1e9)
                         : their < seq
                             ? fmt::format("has not reached it: {} '{}'", inside ? "waiting in" : "busy after", step)
                             : fmt::format("is past it, in '{}'", step);
      if (count <= 8) missing += fmt::format("\n  {}: {}", who, what);
    }
    if (count > 8) missing += fmt::format("\n  ... and {} more", count - 8);
    for (auto& q : reqs)
      if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
    return count ? fmt::format("; {} of {} rank(s) did not arrive:{}", count, size_ - 1, missing) : "";
  }

  void watch() {
    std::unique_lock<std::mutex> lk(mu_);
    while (!quit_) {
      if (roll_call_) answer_queries_locked();
      if (deadline_ns_ == 0) {  // polls: a collective's Watch arms a deadline without notifying
        cv_.wait_for(lk, std::chrono::nanoseconds(kPollNs));
        continue;
      }
      const int64_t left = deadline_ns_ - now_ns();
      if (left > 0) {
        cv_.wait_for(lk, std::chrono::nanoseconds(roll_call_ ? std::min(left, kPollNs) : left));
        continue;
      }
      const std::string who = roll_call_ ? roll_call_locked(seq_) : "";
      std::fprintf(stderr,
                   "%serror: rank %d on host %s waited %.0f s for the other ranks in step '%s' (collective #%lld)%s; "
                   "ending the job (exit 1)\n",
                   message_prefix().c_str(), rank_, hostname_.c_str(), timeout_s_, step_.c_str(), seq_,
                   who.empty() && !roll_call_
                       ? "; a rank is stuck or gone (see mpirun's lines for the host that failed)"
                       : who.c_str());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, kExitFailure);
      std::_Exit(kExitFailure);
    }
  }

  // Waits for a non-blocking collective without spinning: a blocking MPI collective busy-polls
  // a CPU while it waits for the slowest rank, which the loader's workers need (measured with
  // tools/bench-multihost on 2 vCPUs: 0.81 of one process's samples/s with MPI_Allreduce).
  // Polls after 20 µs, doubling up to 250 µs (a step is tens of ms).
  void wait_idle(MPI_Request& req, const char* step) const {
    int64_t pause_ns = 20000;
    for (;;) {
      int done = 0;
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), step);
      if (done) return;
      sleep_until_ns(now_ns() + pause_ns);
      pause_ns = std::min<int64_t>(pause_ns * 2, 250000);
    }
  }

  void check(int rc, const char* step) const {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING + 1] = {};
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(fmt::format("MPI step '{}' failed on rank {} ({}): {}", step, rank_, hostname_, msg), kExitFailure);
  }

  std::vector<std::string> gather_impl(const std::string& mine, const char* step, double timeout_s, bool all) {
    Watch w(*this, step, timeout_s);
    if (mine.size() > static_cast<size_t>(INT32_MAX))
      throw Error(fmt::format("MPI step '{}': {} bytes is too large", step, mine.size()), kExitFailure);
    int n = static_cast<int>(mine.size());
    const bool here = all || rank_ == 0;
    std::vector<int> sizes(here ? static_cast<size_t>(size_) : 0), displs;
    if (all) check(MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD), step);
    else check(MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), step);
    std::string buf;
    if (here) {
      long long total = 0;
      displs.resize(sizes.size());
      for (size_t i = 0; i < sizes.size(); ++i) {
        displs[i] = static_cast<int>(total);
        total += sizes[i];
      }
      if (total > INT32_MAX)
        throw Error(fmt::format("MPI step '{}': {} bytes in all is too large", step, total), kExitFailure);
      buf.resize(static_cast<size_t>(total));
    }
    if (all)
      check(MPI_Allgatherv(mine.data(), n, MPI_CHAR, buf.data(), sizes.data(), displs.data(), MPI_CHAR, MPI_COMM_WORLD),
            step);
    else
      check(MPI_Gatherv(mine.data(), n, MPI_CHAR, buf.data(), sizes.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
            step);
    std::vector<std::string> out;
    for (size_t i = 0; i < sizes.size(); ++i)
      out.emplace_back(buf, static_cast<size_t>(displs[i]), static_cast<size_t>(sizes[i]));
    return out;
  }

  std::string launcher_;
  std::string hostname_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, host_index_ = 0, host_count_ = 1;
  MPI_Comm host_ = MPI_COMM_NULL;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string step_;
  long long seq_ = 0;  // collectives entered (the same count on every rank at the same step)
  bool in_collective_ = false;
  const bool roll_call_;            // MPI_THREAD_MULTIPLE: the watchdog may call MPI beside the main thread
  std::vector<std::string> hosts_;  // hostname per rank
  MPI_Comm watch_comm_ = MPI_COMM_NULL;
  std::list<std::pair<std::unique_ptr<std::string>, MPI_Request>> answers_;  // roll-call answers in flight
  int64_t deadline_ns_ = 0;
  double timeout_s_ = 0;
  bool quit_ = false;
  std::thread watchdog_;
};

}  // namespace

std::unique_ptr<Comm> make_mpi_comm(int* argc, char*** argv, const LaunchInfo& li) {
#ifdef OPEN_MPI
  // Before MPI_Init: Open MPI's own abort there says it "was not built with SLURM's PMI support".
  if (std::string why = srun_without_mpi_plugin(li); !why.empty()) throw UsageError(why);
  if (std::string why = srun_pmi2_needs_pmix(li); !why.empty() && !open_mpi_speaks_pmi2()) throw UsageError(why);
#endif
  int provided = 0;
  // The loader's step exchange runs on whichever rank thread arrives last at the DDP barrier, one
  // at a time, and the watchdog may call MPI_Abort: serialized calls from several threads.
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    throw Error(fmt::format("MPI_Init failed under {} (rank {} of {})", li.launcher, li.rank, li.size), kExitFailure);
  std::atexit(finalize_at_exit);
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw Error("this MPI library does not allow calls from more than one thread (MPI_THREAD_SERIALIZED); "
                "ioprobe's loader needs it: use OpenMPI (Debian's libopenmpi-dev)",
                kExitFailure);
  }
  auto comm = std::make_unique<MpiComm>(li, provided >= MPI_THREAD_MULTIPLE);
  if (comm->size() == 1 && li.size > 1) {
    const std::string msg =
        fmt::format("{} started {} processes but MPI sees only this one: each would run alone. Under Slurm use "
                    "'srun --mpi=pmix' (or mpirun inside the allocation)",
                    li.launcher, li.size);
    comm.reset();
    throw UsageError(msg);
  }
  return comm;
}

}  // namespace ioprobe::comm
