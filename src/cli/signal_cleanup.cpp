#include "cli/signal_cleanup.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>

namespace trilemma::cli {
namespace {

// Written before the handlers are installed, read only by them: a fixed buffer, since a signal
// handler may call nothing that allocates.
char g_temp_path[4096];
constexpr int k_signals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];

extern "C" void remove_temp_and_die(int sig) {
  if (g_temp_path[0] != '\0') ::unlink(g_temp_path);  // async-signal-safe
  std::signal(sig, SIG_DFL);
  ::raise(sig);  // the default action: the exit status still says which signal ended it
}

}  // namespace

RemoveTempOnSignal::RemoveTempOnSignal(const std::string& target) {
  // The writers follow a symlink to the file it names and put the temporary file beside that.
  std::error_code ec;
  std::string resolved = target;
  if (std::filesystem::is_symlink(target, ec)) resolved = std::filesystem::weakly_canonical(target, ec).string();
  const std::string tmp = resolved + ".tmp." + std::to_string(::getpid());
  if (tmp.size() >= sizeof g_temp_path) return;  // too long to keep: no cleanup, no overflow
  std::memcpy(g_temp_path, tmp.c_str(), tmp.size() + 1);
  struct sigaction sa {};
  sa.sa_handler = remove_temp_and_die;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(k_signals[i], &sa, &g_previous[i]);
}

RemoveTempOnSignal::~RemoveTempOnSignal() {
  for (int i = 0; i < 3; ++i) sigaction(k_signals[i], &g_previous[i], nullptr);
  g_temp_path[0] = '\0';
}

}  // namespace trilemma::cli
