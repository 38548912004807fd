// SIGINT / SIGTERM handling shared by every long-running command.
//
// install_interrupt_handlers() makes the first SIGINT or SIGTERM set a flag that the loops poll
// (stop submitting, drain, write a partial result); a second one exits at once with 130 / 143.
#pragma once

namespace ioprobe {

void install_interrupt_handlers();

/// True once SIGINT or SIGTERM arrived.
bool interrupted();

/// The signal number that interrupted the run (SIGINT or SIGTERM), 0 if none.
int interrupt_signal();

/// Exit code for the received signal: 130 for SIGINT, 143 for SIGTERM, 0 if none.
int interrupt_exit_code();

}  // namespace ioprobe
