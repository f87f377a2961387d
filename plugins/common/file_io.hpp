// File reads and writes that plugins can trust whatever is on the disk.
//
// ReadBoundedFile reads regular files only, and at most a limit the caller
// names: a FIFO, /dev/zero, a folder or a sparse 3 GB file where a cache or an
// executable was expected becomes an error naming the file and the limit,
// not a hang or an allocation of the file's claimed size.
// WriteFileAtomically writes a temporary file in the target's folder, syncs
// it and renames it over the target: a reader (another process too) sees the
// old file or the new one, never half of one, even after a crash.
//
// Thread-safety: stateless; concurrent writers of one path each rename a
// whole file (the last rename wins).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::plugin_support {

enum class FileReadStatus {
  kOk,
  kCannotOpen,  // missing, no permission: errno's text is in the message
  kNotRegular,  // a folder, a device, a FIFO, a socket
  kTooLarge,    // more bytes than the caller's limit (checked while reading too)
  kReadFailed,  // an I/O error while reading
};

struct FileReadResult {
  FileReadStatus status = FileReadStatus::kOk;
  std::string message;  // empty when ok; else names the file (and the limit)
  bool ok() const { return status == FileReadStatus::kOk; }
};

// Reads the regular file `path` into *out if it holds at most max_bytes.
// Never blocks on a FIFO (opened non-blocking, then refused) and never reads
// more than max_bytes + 1 bytes, whatever fstat said (the file may grow).
FileReadResult ReadBoundedFile(const std::string& path, uint64_t max_bytes, std::string* out);
FileReadResult ReadBoundedFile(const std::string& path, uint64_t max_bytes,
                               std::vector<uint8_t>* out);

// ReadBoundedFile for Executable_Load(path): the error names the plugin, the
// file and the limit; a missing file is NOT_FOUND, an I/O error DATA_LOSS,
// anything else (not a regular file, too large) INVALID_ARGUMENT.
TsError* ReadExecutableFile(const char* plugin, const std::string& path, uint64_t max_bytes,
                            std::vector<uint8_t>* out);

// The same checks without reading: `path` is a regular file of at most
// max_bytes (for files another library opens itself, such as dlopen, which
// would block on a FIFO).
FileReadResult CheckRegularFile(const std::string& path, uint64_t max_bytes);

// Replaces `path` with `data`: temp file beside it, write, fsync, rename.
// Returns "" on success, else what failed (the temporary file is removed).
std::string WriteFileAtomically(const std::string& path, const void* data, size_t size);

// fsync()s a file written by someone else (e.g. a linker) before it is
// renamed into place.  Returns "" on success, else what failed.
std::string SyncFile(const std::string& path);

}  // namespace tessera::plugin_support
