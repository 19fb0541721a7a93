#pragma once
// EventSource: where events come from (ETW, an .etl file, fanotify, a JSONL
// replay). A source runs on its own thread, decodes what it receives into
// FileEvents with Catalog ids, and hands them to the queue.

#include <string>

#include "core/bounded_queue.h"
#include "core/catalog.h"
#include "core/device_map.h"
#include "core/file_event.h"
#include "core/run_stats.h"

namespace etwaudit {

// What a file source does with input it cannot read: end the run with an
// error naming it, or count it as bad input and go on.
enum class OnBadInput { stop, skip };

class EventSource {
 public:
  virtual ~EventSource() = default;

  // Starts taking events (a live session), once the database is ready and
  // the stop handlers are in place, so that nothing the source sees waits
  // for a migration. Throws Error when it cannot. Most sources start in run().
  virtual void start() {}
  // After start(): the clock the event times come from, as the run records
  // it ("qpc", "etw"), or empty when the source has no choice of clock.
  virtual std::string clock() const { return {}; }

  // How the run record names it: "replay:events.jsonl", "etw", ...
  virtual std::string description() const = 0;
  // True when events come from this machine as they happen; the collector then
  // leaves out its own process.
  virtual bool is_live() const = 0;
  // Delivers events until the input ends, stop() is called or an error ends
  // it (see error()). Counts what it receives, loses or cannot decode in stats.
  virtual void run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) = 0;
  // Asks run() to return soon. Any thread.
  virtual void stop() noexcept = 0;
  // After run(): why it ended early, or empty.
  virtual std::string error() const = 0;
  // The NT-to-DOS path map the writer applies to this source's paths, or null.
  // The collector thread calls it (and to_dos_path) while run() goes on.
  virtual const DeviceMap* device_map() const { return nullptr; }
};

}  // namespace etwaudit
