#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace pygraph::launcher {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

volatile sig_atomic_t g_child = 0;

void forward(int sig, siginfo_t* info, void*) {
  // si_code <= 0: sent by a process (kill, sigqueue, tgkill). A terminal's signals come from the
  // kernel and reached the child already.
  if (g_child > 0 && info->si_code <= 0) kill(g_child, sig);
}

sigset_t forwarded_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kForwarded) sigaddset(&set, sig);
  return set;
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv) {
  ChildResult r;
  int report[2];  // the child writes exec's errno here; a successful exec closes it
  if (pipe2(report, O_CLOEXEC) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  // Blocked across fork, so that no signal finds the handlers set and g_child not yet known.
  const sigset_t set = forwarded_set();
  sigset_t old;
  sigprocmask(SIG_BLOCK, &set, &old);
  const pid_t pid = fork();
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &old, nullptr);
    close(report[0]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    const int err = errno;
    ssize_t ignored = write(report[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  if (pid < 0) {
    r.error = std::strerror(errno);
    close(report[0]);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return r;
  }
  g_child = pid;
  struct sigaction sa = {};
  sa.sa_sigaction = &forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  struct sigaction saved[sizeof kForwarded / sizeof kForwarded[0]];
  for (size_t i = 0; i < sizeof kForwarded / sizeof kForwarded[0]; ++i) {
    sigaction(kForwarded[i], &sa, &saved[i]);
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);

  int err = 0;
  ssize_t n;
  while ((n = read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  r.pid = pid;
  while (waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  for (size_t i = 0; i < sizeof kForwarded / sizeof kForwarded[0]; ++i) {
    sigaction(kForwarded[i], &saved[i], nullptr);
  }
  r.started = n != sizeof err;
  if (!r.started) r.error = std::strerror(err);
  return r;
}

void exit_like(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    std::_Exit(128 + sig);  // a signal that does not end a process
  }
  std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace pygraph::launcher
