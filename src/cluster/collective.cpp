#include "cluster/collective.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <new>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ioprobe::cluster {

std::string outcome_of(const std::function<void()>& fn) {
  try {
    fn();
    return "";
  } catch (const JobFailure& e) {
    return fmt::format("{} ", e.exit_code());
  } catch (const Error& e) {
    return fmt::format("{} {}", e.exit_code(), e.what());
  } catch (const std::bad_alloc&) {
    return fmt::format("{} out of memory: an allocation was refused", static_cast<int>(kExitFailure));
  } catch (const std::exception& e) {
    return fmt::format("{} {}", static_cast<int>(kExitFailure), e.what());
  }
}

void raise_failures(comm::Comm& comm, const std::vector<std::string>& outcomes, const std::vector<std::string>& hosts,
                    const char* step) {
  int code = 0;
  std::string lines;
  size_t failed = 0;
  // One line per distinct message, naming every process that failed with it (the same bad
  // option on 64 processes is one line, not 64).
  std::vector<std::pair<std::string, std::string>> by_msg;  // message, who
  for (size_t r = 0; r < outcomes.size(); ++r) {
    if (outcomes[r].empty()) continue;
    ++failed;
    const size_t sp = outcomes[r].find(' ');
    const int c = std::atoi(outcomes[r].substr(0, sp).c_str());
    code = std::max(code, c > 0 ? c : static_cast<int>(kExitFailure));
    const std::string msg = sp == std::string::npos ? "" : outcomes[r].substr(sp + 1);
    if (msg.empty()) continue;
    const std::string who = r < hosts.size() ? fmt::format("host {} (rank {})", hosts[r], r)
                                             : fmt::format("rank {}", r);
    auto it = std::find_if(by_msg.begin(), by_msg.end(), [&](const auto& m) { return m.first == msg; });
    if (it == by_msg.end()) by_msg.emplace_back(msg, who);
    else it->second += ", " + who;
  }
  for (const auto& [msg, who] : by_msg) lines += fmt::format("\n  {}: {}", who, msg);
  if (!failed) return;
  throw JobFailure(comm.rank() == 0 ? fmt::format("{} of {} processes failed{}:{}", failed, outcomes.size(),
                                                  step ? fmt::format(" ({})", step) : "", lines)
                                    : "",
                   code);
}

void on_every_host(comm::Comm& comm, const char* step, const std::function<void()>& fn) {
  if (!comm.multi()) {
    fn();
    return;
  }
  // No watchdog here: a step such as generating a dataset may rightly take long on one host.
  share_outcomes(comm, outcome_of(fn), step, 0, step);
}

void share_outcomes(comm::Comm& comm, const std::string& outcome, const char* gather_step, double timeout_s,
                    const char* what) {
  const std::vector<std::string> all = comm.allgather(outcome, gather_step, timeout_s);
  const std::vector<std::string> hosts = comm.allgather(comm.hostname(), gather_step, timeout_s);
  raise_failures(comm, all, hosts, what);
}

}  // namespace ioprobe::cluster
