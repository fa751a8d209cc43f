#include "cli/signal_cleanup.hpp"

#include <unistd.h>

#include <csignal>

#include "types/staged_file.hpp"

namespace trilemma::cli {
namespace {

constexpr int k_signals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];

extern "C" void remove_temp_and_die(int sig) {
  // The temporary files the StagedFiles of this process are writing (static buffers).
  for (int i = 0; i < k_max_staged; ++i)
    if (const char* p = staged_temp_path(i); p[0] != '\0') ::unlink(p);  // async-signal-safe
  std::signal(sig, SIG_DFL);
  ::raise(sig);  // the default action: the exit status still says which signal ended it
}

}  // namespace

RemoveTempOnSignal::RemoveTempOnSignal() {
  struct sigaction sa {};
  sa.sa_handler = remove_temp_and_die;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(k_signals[i], &sa, &g_previous[i]);
}

RemoveTempOnSignal::~RemoveTempOnSignal() {
  for (int i = 0; i < 3; ++i) sigaction(k_signals[i], &g_previous[i], nullptr);
}

}  // namespace trilemma::cli
