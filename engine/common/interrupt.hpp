// Ctrl-C (SIGINT) and SIGTERM end the process with one line on stderr and the shell's code (128 + signal),
// removing the temporary files of outputs still being written.
#pragma once

#include <string>

namespace simumax::common {

// Installs the handler; a handler it replaces (another copy's, in the process that loaded this code as a module)
// runs after it removes its own temporaries. SimGrid installs its own SIGINT handler when its engine starts (it
// prints a status and exits 1): put the earlier handlers back, then call this again.
void install_interrupt_handler();

// A file being written under a temporary name: removed if the process is interrupted before
// unregister_temporary. `path` must stay valid until then. Up to 64 at once (more are not tracked).
void register_temporary(const char* path);
void unregister_temporary(const char* path);

// A folder of files (no subfolders) being written: its files and itself are removed if the process is
// interrupted before unregister_temporary_dir. One at a time (a run's staging folder); `path` must stay valid.
void register_temporary_dir(const char* path);
void unregister_temporary_dir(const char* path);

// A scratch file of this process at `path`, registered as above from construction: removed by the destructor,
// and if the process is interrupted before. The owner creates and writes it.
class ScratchFile {
 public:
  explicit ScratchFile(std::string path);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace simumax::common
