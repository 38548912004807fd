// Running one step of a command on every process of a multi-host job so that a failure on any
// host ends the job on every host, named, instead of leaving the others waiting.
#pragma once

#include <functional>
#include <string>

#include "comm/comm.hpp"
#include "core/error.hpp"

namespace ioprobe::cluster {

/// A failure every process of the job knows of (so each may exit normally): on rank 0 it holds
/// the message to print; on the other ranks the message is empty (rank 0 prints it).
class JobFailure : public Error {
 public:
  JobFailure(const std::string& message, int exit_code) : Error(message, exit_code) {}
};

/// Runs `fn` on this process, then learns from every process whether its `fn` succeeded. When
/// any failed, throws JobFailure on every rank, with the highest exit code; on rank 0 its message
/// lists each failure as "host HOST (rank R): message".
/// `step` names the step in a watchdog message. With a LocalComm it is just fn().
void on_every_host(comm::Comm& comm, const char* step, const std::function<void()>& fn);

/// Encodes this process's outcome for a gather: "" for success, else "<exit code> <message>".
std::string outcome_of(const std::function<void()>& fn);

/// Throws as on_every_host does when any of `outcomes` (one per rank, from allgather) is a
/// failure; `hosts` gives each rank's hostname (may be shorter: then "rank R" alone).
/// `step` names what failed in the message.
void raise_failures(comm::Comm& comm, const std::vector<std::string>& outcomes, const std::vector<std::string>& hosts,
                    const char* step = nullptr);

/// Learns every process's `outcome` (outcome_of's form: "" for success) in one exchange named
/// `gather_step`, within `timeout_s` seconds (0: no watchdog), and throws as on_every_host does
/// when any process failed; `what` names the failed step in the message (null: none).
void share_outcomes(comm::Comm& comm, const std::string& outcome, const char* gather_step, double timeout_s,
                    const char* what = nullptr);

}  // namespace ioprobe::cluster
