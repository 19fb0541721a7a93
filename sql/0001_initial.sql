-- Schema v1.
--
-- Times are integers: nanoseconds since 1970-01-01T00:00:00Z (UTC). The v_*
-- views show them as ISO-8601 text.
--
-- How the event table stays fast and small
-- ----------------------------------------
-- A per-row B-tree index on (file, time) or (process, time) costs one random
-- page write per event and doubles the size of the store. Instead, events are
-- appended in time order and located through two small summaries, kept in the
-- same transaction as the events they describe (the idea of a zone map, or of
-- PostgreSQL's BRIN):
--
--   events.id   is the event's time in ns, nudged up by a few ns when two
--               events share a time or one arrives late, so that ids only
--               grow. ts holds the exact time whenever it differs from id
--               (NULL otherwise). "By time" is therefore a range scan on the
--               table's own key.
--   segments    cuts the id sequence into runs of at most 65,536 events that
--               never cross an hour, with each run's id and time bounds.
--   activity    one row per (segment, process, file) with event and byte
--               counts per operation and the id range those events lie in.
--               Its key (segment first) and its index by file answer "which
--               events touched this process / this file, and where are they",
--               and its sums are what the reports aggregate.

CREATE TABLE ops (
  op          INTEGER PRIMARY KEY,   -- the value stored in events.op
  name        TEXT NOT NULL UNIQUE,  -- read, write, open, disk_read, ...
  description TEXT NOT NULL
);

INSERT INTO ops (op, name, description) VALUES
  (0,  'read',        'file read (offset and size when the source has them)'),
  (1,  'write',       'file write (offset and size when the source has them)'),
  (2,  'open',        'file opened or created (NtCreateFile, open(2))'),
  (3,  'close',       'file object closed'),
  (4,  'cleanup',     'last handle to a file object closed (Windows)'),
  (5,  'create',      'new file created'),
  (6,  'delete',      'file deleted'),
  (7,  'rename',      'file renamed or moved'),
  (8,  'set_info',    'file information set (size, times, attributes)'),
  (9,  'flush',       'file buffers flushed'),
  (10, 'disk_read',   'disk read issued for a file (below the cache)'),
  (11, 'disk_write',  'disk write issued for a file (below the cache)'),
  (12, 'close_write', 'file closed after being written (Linux)');

CREATE TABLE files (
  file_id     INTEGER PRIMARY KEY,
  path        TEXT,                  -- DOS or POSIX path; NULL while unresolved
  nt_path     TEXT,                  -- \Device\... form as the kernel reported it
  file_key    INTEGER,               -- kernel FileKey/FileObject while the name is unknown
  name_source TEXT                   -- where the name came from: event, rundown, backfill, replay, ...
);
CREATE INDEX files_by_path ON files (path);

CREATE TABLE processes (
  process_id   INTEGER PRIMARY KEY,
  pid          INTEGER NOT NULL,
  start_time   INTEGER,              -- ns since epoch; with pid, tells reused pids apart
  image        TEXT,                 -- executable path (or name when that is all we know)
  command_line TEXT
);
CREATE INDEX processes_by_pid ON processes (pid, start_time);

CREATE TABLE events (
  id         INTEGER PRIMARY KEY,    -- time in ns, made unique and increasing (see above)
  ts         INTEGER,                -- exact time in ns when it differs from id, else NULL
  process_id INTEGER NOT NULL REFERENCES processes,
  tid        INTEGER,                -- thread id
  op         INTEGER NOT NULL REFERENCES ops,
  file_id    INTEGER NOT NULL REFERENCES files,
  offset     INTEGER,                -- byte offset in the file, when known
  size       INTEGER                 -- bytes transferred, when known
);

CREATE TABLE segments (
  segment_id INTEGER PRIMARY KEY,
  hour       INTEGER NOT NULL,       -- hours since epoch that every event of the segment falls in
  first_id   INTEGER NOT NULL,       -- events.id bounds of the segment
  last_id    INTEGER NOT NULL,
  min_time   INTEGER NOT NULL,       -- exact time bounds (ns) of its events
  max_time   INTEGER NOT NULL,
  events     INTEGER NOT NULL
);
CREATE INDEX segments_by_hour ON segments (hour);

CREATE TABLE activity (
  segment_id       INTEGER NOT NULL,
  process_id       INTEGER NOT NULL,
  file_id          INTEGER NOT NULL,
  events           INTEGER NOT NULL,  -- all events of this process on this file in the segment
  first_id         INTEGER NOT NULL,  -- events.id range holding them
  last_id          INTEGER NOT NULL,
  -- events per operation (a zero costs SQLite one byte), and bytes where they mean something
  reads            INTEGER NOT NULL DEFAULT 0,
  read_bytes       INTEGER NOT NULL DEFAULT 0,
  writes           INTEGER NOT NULL DEFAULT 0,
  write_bytes      INTEGER NOT NULL DEFAULT 0,
  opens            INTEGER NOT NULL DEFAULT 0,
  closes           INTEGER NOT NULL DEFAULT 0,
  cleanups         INTEGER NOT NULL DEFAULT 0,
  creates          INTEGER NOT NULL DEFAULT 0,
  deletes          INTEGER NOT NULL DEFAULT 0,
  renames          INTEGER NOT NULL DEFAULT 0,
  set_infos        INTEGER NOT NULL DEFAULT 0,
  flushes          INTEGER NOT NULL DEFAULT 0,
  disk_reads       INTEGER NOT NULL DEFAULT 0,
  disk_read_bytes  INTEGER NOT NULL DEFAULT 0,
  disk_writes      INTEGER NOT NULL DEFAULT 0,
  disk_write_bytes INTEGER NOT NULL DEFAULT 0,
  close_writes     INTEGER NOT NULL DEFAULT 0,
  -- By time and process: segments are in time order, so this key is the index
  -- for "what did process P do between T1 and T2".
  PRIMARY KEY (segment_id, process_id, file_id)
) WITHOUT ROWID;
-- By file and time.
CREATE INDEX activity_by_file ON activity (file_id, segment_id);

CREATE TABLE collector_runs (
  run_id          INTEGER PRIMARY KEY,
  source          TEXT NOT NULL,     -- replay:FILE, etw, etl:FILE, fanotify, ...
  live            INTEGER NOT NULL,  -- 1: events as they happened on this host; 0: from a file
  input_hash      TEXT,              -- fingerprint of the file a run read (imports), to refuse reading it twice
  host            TEXT,
  pid             INTEGER,           -- the collector's own pid
  version         TEXT,              -- etwaudit version that wrote the run
  started_at      INTEGER NOT NULL,  -- ns since epoch
  last_commit_at  INTEGER,           -- time of the latest committed batch
  stopped_at      INTEGER,           -- NULL while running, or after a crash
  first_event_at  INTEGER,           -- time of the earliest and latest event written
  last_event_at   INTEGER,
  events_received INTEGER NOT NULL DEFAULT 0,  -- events the source delivered
  events_written  INTEGER NOT NULL DEFAULT 0,  -- events committed to this database
  events_dropped  INTEGER NOT NULL DEFAULT 0,  -- dropped because our queue was full
  events_lost     INTEGER NOT NULL DEFAULT 0,  -- lost before reaching us, as the source reports
  events_excluded INTEGER NOT NULL DEFAULT 0,  -- our own process and database files, and filters
  bad_input       INTEGER NOT NULL DEFAULT 0,  -- input records that could not be decoded
  unresolved      INTEGER NOT NULL DEFAULT 0,  -- events written without a file name
  exit_reason     TEXT               -- why the run ended; NULL while running or after a crash
);

-- Views for people.

-- Every file with the best name known for it.
CREATE VIEW v_files AS
SELECT file_id, path, nt_path, file_key, name_source,
       coalesce(path, nt_path,
                CASE WHEN file_key IS NULL THEN '<unknown>' ELSE printf('<unresolved key 0x%x>', file_key) END) AS name
FROM files;

CREATE VIEW v_events AS
SELECT
  strftime('%Y-%m-%dT%H:%M:%S', t.time / 1000000000, 'unixepoch')
    || printf('.%07dZ', (t.time % 1000000000) / 100) AS time,
  p.pid          AS pid,
  p.image        AS process,
  o.name         AS op,
  f.name         AS path,
  t.offset       AS offset,
  t.size         AS size,
  t.tid          AS tid,
  t.time         AS time_ns,
  t.id           AS event_id
FROM (SELECT e.*, coalesce(e.ts, e.id) AS time FROM events e) AS t
JOIN processes p ON p.process_id = t.process_id
JOIN v_files f ON f.file_id = t.file_id
JOIN ops o ON o.op = t.op;

-- What a run covers: for a live source the time it ran, for a file the time
-- its events span.
CREATE VIEW v_run_coverage AS
SELECT run_id,
       CASE WHEN live THEN started_at ELSE first_event_at END AS covered_from,
       CASE WHEN live THEN coalesce(stopped_at, last_commit_at, started_at) ELSE last_event_at END AS covered_until
FROM collector_runs;

CREATE VIEW v_runs AS
SELECT
  run_id, source, live, host, pid, version,
  strftime('%Y-%m-%dT%H:%M:%SZ', started_at / 1000000000, 'unixepoch') AS started,
  strftime('%Y-%m-%dT%H:%M:%SZ', coalesce(stopped_at, last_commit_at) / 1000000000, 'unixepoch') AS ended,
  events_received, events_written, events_dropped, events_lost, events_excluded,
  bad_input, unresolved,
  coalesce(exit_reason, CASE WHEN stopped_at IS NULL THEN 'running or interrupted' END) AS exit_reason
FROM collector_runs;
