#pragma once
//! The temporary files this process is writing, removed when a signal ends it (docs/design.md §6).
//!
//! An output written under a temporary name and renamed when complete (io/output_file.h) must not
//! outlive an interrupted run: Ctrl-C in the middle of a 400 MB CSV would leave the
//! `NAME.tmp.PID.N` file behind. The live names are kept in a fixed table that a signal handler
//! can walk without allocating or locking; on SIGINT, SIGTERM, SIGHUP and SIGPIPE the handler
//! unlinks them, restores the default action and raises the signal again, so the process still
//! ends by that signal (its parent sees the same status as without the handler). A signal whose
//! action is not the default when the first temporary file appears (ignored, or another
//! handler's) is left alone.

#include <string>

namespace nf::io {

//! Records `path` as a live temporary file (installing the signal handlers on first use) and
//! returns its slot for unregister_temp_file. Register before creating the file: a signal in
//! between then unlinks a name that does not exist yet, which is harmless. Returns -1 when the
//! table (64 names, far more than a command writes at once) is full or the name too long: the
//! file is then written as before but not removed by a signal.
int register_temp_file(const std::string& path);
//! Installs the signal handlers (register_temp_file does so once, by itself). Call it again after
//! changing the actions of those signals (a test's child process does).
void install_temp_file_cleanup();
//! Forgets slot `slot` (after the file was renamed or removed; -1 is ignored).
void unregister_temp_file(int slot);
//! How many temporary files are registered now (tests).
int live_temp_files();

}  // namespace nf::io
