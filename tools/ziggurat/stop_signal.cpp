#include "stop_signal.hpp"

#include <csignal>
#include <cstring>

namespace ziggurat::cli {

namespace {

volatile std::sig_atomic_t received = 0;
struct sigaction previous_term {}, previous_int {};

extern "C" void note_signal(int signal) { received = signal; }

}  // namespace

RunStopped::RunStopped(int signal)
    : std::runtime_error(std::string("stopped by ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT")), signal(signal) {}

StopOnSignal::StopOnSignal() {
  received = 0;
  struct sigaction action {};
  action.sa_handler = note_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, &previous_term);
  sigaction(SIGINT, &action, &previous_int);
}

StopOnSignal::~StopOnSignal() {
  sigaction(SIGTERM, &previous_term, nullptr);
  sigaction(SIGINT, &previous_int, nullptr);
}

int stop_requested() { return received; }

void throw_if_stop_requested() {
  if (received != 0) throw RunStopped(received);
}

int stopped_exit_status(int signal) { return 128 + signal; }

}  // namespace ziggurat::cli
