-- Schema v3: retention (pruning old events), long-term hourly totals, and
-- coalesced event rows.
--
-- Pruning
-- -------
-- A collector that runs for months cannot keep every event. Retention
-- (collect --keep / --max-size, or etwaudit prune) deletes whole segments,
-- oldest first, a few per transaction. In the same transaction it adds the
-- segment's activity rows into hour_totals, so that what the events said in
-- sum is never lost: at every commit, for any hour,
--
--     hour_totals (what was pruned) + activity (what is kept) = every event
--
-- and the reports over time, processes and files (top-files, top-processes,
-- timeline, summary, process-activity) read both. minute_totals are never
-- pruned. The size cap wins over the hourly totals only when nothing else is
-- left to prune: then their oldest hours go too (totals_pruned_before), and
-- timeline and summary still count those events from minute_totals. The freed pages go on SQLite's free list and are reused by new
-- events, so a database at its size cap stops growing.
--
-- Coalescing
-- ----------
-- With collect --coalesce-ms N, a process's events of one operation on one
-- file that begin within N ms of the first become one row: count says how
-- many, size is their total bytes, offset the first event's offset and
-- end_offset the end of the last one's range, stored only when it is not
-- offset + size (a sequential run); v_events shows it either way. count is
-- NULL for a row that stands for one event. activity.events and the per-operation counts count
-- events; activity.rows counts rows (NULL: as many as events), which is what
-- the listings use to find where their rows lie. segments.events counts rows.

ALTER TABLE events ADD COLUMN count INTEGER;       -- events this row stands for; NULL = 1
ALTER TABLE events ADD COLUMN end_offset INTEGER;  -- coalesced rows: end of the last event's range, if not offset + size
ALTER TABLE activity ADD COLUMN rows INTEGER;      -- event rows; NULL = events

-- Activity of pruned segments, added up per hour.
CREATE TABLE hour_totals (
  hour             INTEGER NOT NULL,  -- hours since epoch
  process_id       INTEGER NOT NULL,
  file_id          INTEGER NOT NULL,
  events           INTEGER NOT NULL,
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
  PRIMARY KEY (hour, process_id, file_id)
) WITHOUT ROWID;
CREATE INDEX hour_totals_by_file ON hour_totals (file_id, hour);

-- What has been pruned, and the retention the last collector applied.
CREATE TABLE retention (
  id              INTEGER PRIMARY KEY CHECK (id = 1),  -- one row
  pruned_before   INTEGER,  -- ns: events before this time may have been pruned (NULL: none were)
  totals_pruned_before INTEGER,  -- ns: hourly totals before this time were dropped for --max-size (NULL: none)
  totals_pruned_events INTEGER NOT NULL DEFAULT 0,  -- the events those hourly totals counted
  pruned_segments INTEGER NOT NULL DEFAULT 0,  -- totals of everything pruned so far
  pruned_rows     INTEGER NOT NULL DEFAULT 0,
  pruned_events   INTEGER NOT NULL DEFAULT 0,
  last_prune_at   INTEGER,  -- ns: when a prune last deleted something
  keep_ns         INTEGER,  -- the --keep and --max-size of the collector that last ran with them
  max_bytes       INTEGER
);
INSERT INTO retention (id) VALUES (1);

DROP VIEW v_events;
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
  coalesce(t.count, 1) AS count,
  CASE WHEN t.count > 1 THEN coalesce(t.end_offset, t.offset + t.size) END AS end_offset,
  t.tid          AS tid,
  t.time         AS time_ns,
  t.id           AS event_id
FROM (SELECT e.*, coalesce(e.ts, e.id) AS time FROM events e) AS t
JOIN processes p ON p.process_id = t.process_id
JOIN v_files f ON f.file_id = t.file_id
JOIN ops o ON o.op = t.op;
