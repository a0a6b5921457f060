#include "log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace pygraph {
namespace {

LogLevel g_level = LogLevel::kError;

void vlog(const char* fmt, va_list ap) {
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "pygraph: ");
  int m = std::vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
  if (m < 0) return;
  size_t len = static_cast<size_t>(n) + static_cast<size_t>(m);
  if (len > sizeof buf - 2) len = sizeof buf - 2;
  buf[len++] = '\n';
  ssize_t ignored = ::write(2, buf, len);
  (void)ignored;
}

}  // namespace

void set_log_level(LogLevel level) {
  g_level = level;
}

void log_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(fmt, ap);
  va_end(ap);
}

void log_info(const char* fmt, ...) {
  if (g_level < LogLevel::kInfo) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(fmt, ap);
  va_end(ap);
}

void log_debug(const char* fmt, ...) {
  if (g_level < LogLevel::kDebug) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(fmt, ap);
  va_end(ap);
}

}  // namespace pygraph
