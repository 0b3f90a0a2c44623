#define WIN32_LEAN_AND_MEAN
#include <atomic>
#include <windows.h>

#include "platform/interrupt.h"
#include "platform/process.h"

namespace sagebuild::platform {
namespace {

std::atomic<int> g_interrupts{0};

// Runs on a thread the system makes. The first Ctrl-C (or Ctrl-Break, or the console closing)
// asks everything to stop; the next one is left to the default handler, which ends us.
BOOL WINAPI on_console_event(DWORD event) {
  if (event != CTRL_C_EVENT && event != CTRL_BREAK_EVENT && event != CTRL_CLOSE_EVENT) {
    return FALSE;
  }
  if (g_interrupts.fetch_add(1) > 0) return FALSE;
  request_stop(event == CTRL_CLOSE_EVENT   ? "the console closing"
               : event == CTRL_BREAK_EVENT ? "Ctrl-Break"
                                           : "Ctrl-C");
  return TRUE;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  ::SetConsoleCtrlHandler(on_console_event, TRUE);
}

InterruptGuard::~InterruptGuard() {
  ::SetConsoleCtrlHandler(on_console_event, FALSE);
}

}  // namespace sagebuild::platform
