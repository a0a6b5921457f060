// The whole text of a file the user names (the config file, the decision cache), read inside
// the user's process. Opened without blocking and asked what it is through the open
// descriptor: a pipe at the path would otherwise hold the process in open(), and a check of
// the path before the open could be outrun by a swap of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pygraph {

enum class FileText { kRead, kMissing, kNotAFile, kFailed };

// Reads the regular file at `path` into `text`. Otherwise `error` says why: strerror's text
// (kMissing, kFailed; "Is a directory" for a folder, kNotAFile), "not a regular file" (a
// device or a pipe, kNotAFile), or "larger than N MiB" past `max_bytes` (kFailed).
FileText read_file_text(const std::string& path, std::string* text, std::string* error,
                        size_t max_bytes = SIZE_MAX);

}  // namespace pygraph
