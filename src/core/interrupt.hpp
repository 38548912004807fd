// SIGINT / SIGTERM handling shared by every long-running command.
//
// install_interrupt_handlers() makes the first SIGINT or SIGTERM set a flag that the loops poll
// (stop submitting, drain, write a partial result); a second one exits at once with 130 / 143.
#pragma once

#include <string>

namespace ioprobe {

void install_interrupt_handlers();

/// What the handler's lines start with ("ioprobe calibrate: "); "ioprobe: " until set. Call it
/// from one thread, before the signals it should name can arrive (set_message_command does).
void set_interrupt_prefix(const std::string& prefix);

/// A temporary file a second signal (which quits at once, without the usual cleanup) removes
/// first. Returns the slot to give keep_on_quit() once the file is gone or kept, or -1 when all 8
/// slots are taken or the path is longer than PATH_MAX (the file is then not removed on a quit).
/// Registration is for one thread at a time.
int remove_on_quit(const std::string& path);

/// Ends remove_on_quit()'s hold of `slot` (-1: nothing).
void keep_on_quit(int slot);

/// True once SIGINT or SIGTERM arrived.
bool interrupted();

/// The signal number that interrupted the run (SIGINT or SIGTERM), 0 if none.
int interrupt_signal();

/// How a result says it was stopped by `signal`: "interrupted (SIGTERM)" for SIGTERM,
/// "interrupted (SIGINT)" otherwise (the loader's and raw's stop reasons).
std::string interrupted_text(int signal);

/// Exit code for the received signal: 130 for SIGINT, 143 for SIGTERM, 0 if none.
int interrupt_exit_code();

}  // namespace ioprobe
