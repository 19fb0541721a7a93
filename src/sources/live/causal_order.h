#pragma once
// The order of one read of fanotify's two groups (fanotify_source.h).
//
// The content group (open, read, write, close) and the name group (create,
// delete, rename) are separate kernel queues without timestamps: each keeps
// its own events in the order they happened, but nothing says how the two
// interleave. The source reads the content group first and the name group
// right after, so every content event it holds happened before the names
// were read, and the name event that created its file is among those names
// or was read before (doc/design.md, "Event order on Linux"). The two lists
// are merged here so that, for each file,
//
//   - a create comes before the content events of the same read on that
//     path,
//   - a delete after them, and
//   - a rename's two rows (its old name, then its new) together after the
//     content events of both names: the path of a content event is the name
//     its file had when it was read, so a file written and renamed within
//     one read (a temporary file saved into place) shows its writes under
//     the new name, before the rename;
//
// keeping each group's own order, and every name event of one path in the
// order the kernel gave. Events of different files keep no order between
// the groups: none is known.
//
// Times: an event's time is when it was read, which is after it happened.
// In the merged order each time is lowered to the earliest time of the
// events after it on the same path, which is still no earlier than the
// event happened (it happened before them) and makes each file's times rise
// with its order.

#include <vector>

#include "core/file_event.h"

namespace etwaudit {

struct NameEvent {
  FileEvent event;
  // A delete, or the old name of a rename: after the content events of its
  // path. Otherwise (a create) before them; the new name of a rename goes
  // with its old name, after the content events of both.
  bool ends = false;
};

// Both lists in the order their group gave them; the result holds every
// event of both.
std::vector<FileEvent> merge_in_causal_order(const std::vector<FileEvent>& content,
                                             const std::vector<NameEvent>& names);

// A pid that exec'd another program: its process before and after, and
// where the exec open lies among the content events.
struct ExecSwitch {
  std::uint32_t before, after;
  std::size_t at;
};

// Who made a name event of the pid whose process is now `process`. Name
// events are given their process after the exec opens queued before them
// were read, so that a rename by a program just exec'd is that program's;
// but a create (or a rename's new name) of a file that the program before
// the exec already worked on was that program's ("echo hi > f; exec cp f g":
// the shell's). Deletes and old names stay the current program's.
std::uint32_t name_event_process(const std::vector<FileEvent>& content, const std::vector<ExecSwitch>& execs,
                                 std::uint32_t process, std::uint32_t path, bool ends);

}  // namespace etwaudit
