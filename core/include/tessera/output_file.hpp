// Files a user names as an output (tessera-compile -o, tessera-run --save
// and --output, TESSERA_TRACE, Program::Save): written the way the user
// means, and every failure reported with its reason.
//
//  - A new file, or an existing regular file: written whole to a temporary
//    file beside it, flushed to the disk (fsync) and renamed over it, so
//    that a full disk or a crash leaves the old content (or nothing), never
//    a truncated file.  An existing file keeps its permissions (not its
//    owner, nor other hard links to it); one the user may not write is
//    refused.  A writable file in a folder that takes no new file is
//    written in place.
//  - An existing file that is not a regular file (/dev/null, a FIFO, a
//    terminal): written in place.  Renaming over it replaced the device
//    node with a regular file (as root, `-o /dev/null` deleted the system's
//    /dev/null).  A FIFO that no process is reading is an error
//    (FAILED_PRECONDITION), not a write that waits for a reader for ever.
//  - A symbolic link (or a chain of them): its target is written, the
//    links stay.
//  - A folder, or a path in a folder that does not exist: an error that
//    says so.
//
// Thread-safety: independent calls may run at once (each has its own
// temporary file).
#ifndef TESSERA_OUTPUT_FILE_HPP_
#define TESSERA_OUTPUT_FILE_HPP_

#include <cstddef>
#include <string>
#include <string_view>

#include "tessera/status.hpp"

namespace tessera {

Status WriteOutputFile(const std::string& path, std::string_view data);

// Whether `a` and `b` name the same existing file (same device and inode:
// "x.mlir" and "./dir/../x.mlir" do); false when either does not exist.
// Tools refuse an output that would overwrite one of their inputs.
bool SameFile(const std::string& a, const std::string& b);

}  // namespace tessera

#endif
