#include "file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pygraph {

FileText read_file_text(const std::string& path, std::string* text, std::string* error,
                        size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = std::strerror(errno);
    return errno == ENOENT ? FileText::kMissing : FileText::kFailed;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *error = std::strerror(errno);
    ::close(fd);
    return FileText::kFailed;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = S_ISDIR(st.st_mode) ? std::strerror(EISDIR) : "not a regular file";
    ::close(fd);
    return FileText::kNotAFile;
  }
  text->clear();
  char buf[8192];  // on the stack of whichever thread reads (a save runs at exit): kept small
  ssize_t n;
  while (((n = ::read(fd, buf, sizeof buf)) > 0 && text->size() <= max_bytes) ||
         (n < 0 && errno == EINTR)) {
    if (n > 0) text->append(buf, static_cast<size_t>(n));
  }
  const int err = errno;
  ::close(fd);
  if (n < 0) {
    *error = std::strerror(err);
    return FileText::kFailed;
  }
  if (text->size() > max_bytes) {
    *error = "larger than " + std::to_string(max_bytes >> 20) + " MiB";
    return FileText::kFailed;
  }
  return FileText::kRead;
}

}  // namespace pygraph
