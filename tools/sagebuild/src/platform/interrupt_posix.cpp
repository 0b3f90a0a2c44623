#include <signal.h>

#include "platform/interrupt.h"
#include "platform/process.h"

namespace sagebuild::platform {
namespace {

struct sigaction g_previous_int, g_previous_term;

extern "C" void on_interrupt(int signal) {
  request_stop(signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "Ctrl-C (SIGINT)" : "a signal");
  // The next one is not ours to soften.
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  sigemptyset(&defaults.sa_mask);
  ::sigaction(signal, &defaults, nullptr);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &g_previous_int);
  ::sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
}

}  // namespace sagebuild::platform
