-- Schema v21: totals per file, per process and per (process, file) over the
-- whole database, for browsing it in DB Browser for SQLite and the like.
--
-- A browser opens a table or a view with SELECT COUNT(*) and then pages
-- through it with LIMIT offset, n; a filter box becomes "col" LIKE '%text%',
-- a header click ORDER BY "col". Over the events (10 million rows) each of
-- these reads every row: seconds. The questions people start from are
-- smaller (which files, which processes, who touched what), and these
-- tables answer them with one row each, holding every event ever written,
-- pruned hours included (retention leaves them, but for --max-size, below;
-- a file row merged into another, an unresolved kernel key that turned out
-- to have a name, moves its totals with it).
--
-- Adding to them in every batch rewrote their pages all over the table
-- each time (the collector's cost per event rose by a third at 10 million
-- events), so the writer keeps what it wrote since the last fold in memory
-- and adds it every few seconds (store/browsing_totals.h), when a run ends
-- and before retention prunes: totals_folded.through_id says up to which
-- events.id they hold, and a writer that starts after one that died adds
-- the events after it from the event tables.
--
-- file_totals.processes and process_totals.files count the (process, file)
-- pairs as they come (the trigger).
--
-- Under --max-size the pairs are bounded: one in 4 KiB of the cap (about a
-- thirtieth of it), the pairs seen longest ago going first; under a cap
-- below 64 MiB the collector keeps no totals at all (they would take much
-- of it, and a fold, which touches every page of them, much of its WAL). The files' and
-- processes' rows keep what the pairs added (files, like their names, are
-- never pruned): v_process_file_totals then lists the pairs seen lately.
--
-- The first and last event's times are kept as text (ISO 8601 in UTC, as
-- v_events shows them, which sorts as the times do): formatting them for
-- every row of a sorted page took longer than the sort.
--
-- The views show them with names, and bytes empty where the
-- source gave no sizes (no read or write of the row had one: fanotify).
-- They join the names by key, with LEFT JOIN so that a count never loses
-- a row (SQLite makes it a plain join again where a filter reads a name).

CREATE TABLE file_totals (
  file_id          INTEGER PRIMARY KEY REFERENCES files,
  processes        INTEGER NOT NULL DEFAULT 0,  -- processes that touched it
  events           INTEGER NOT NULL DEFAULT 0,  -- events that did not fail (as in activity)
  failed           INTEGER NOT NULL DEFAULT 0,  -- events that failed, counted nowhere else
  unsized          INTEGER NOT NULL DEFAULT 0,  -- reads and writes whose source gave no size (fanotify)
  first_seen       TEXT NOT NULL,               -- the time of the first and the last event
  last_seen        TEXT NOT NULL,
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
  overwrites       INTEGER NOT NULL DEFAULT 0,
  paging_reads     INTEGER NOT NULL DEFAULT 0,
  paging_read_bytes INTEGER NOT NULL DEFAULT 0,
  paging_writes    INTEGER NOT NULL DEFAULT 0,
  paging_write_bytes INTEGER NOT NULL DEFAULT 0,
  CHECK (file_id > 0)
);

CREATE TABLE process_totals (
  process_id       INTEGER PRIMARY KEY REFERENCES processes,
  files            INTEGER NOT NULL DEFAULT 0,  -- files it touched
  events           INTEGER NOT NULL DEFAULT 0,  -- events that did not fail (as in activity)
  failed           INTEGER NOT NULL DEFAULT 0,  -- events that failed, counted nowhere else
  unsized          INTEGER NOT NULL DEFAULT 0,  -- reads and writes whose source gave no size (fanotify)
  first_seen       TEXT NOT NULL,               -- the time of the first and the last event
  last_seen        TEXT NOT NULL,
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
  overwrites       INTEGER NOT NULL DEFAULT 0,
  paging_reads     INTEGER NOT NULL DEFAULT 0,
  paging_read_bytes INTEGER NOT NULL DEFAULT 0,
  paging_writes    INTEGER NOT NULL DEFAULT 0,
  paging_write_bytes INTEGER NOT NULL DEFAULT 0,
  CHECK (process_id > 0)
);

CREATE TABLE process_file_totals (
  process_id       INTEGER NOT NULL REFERENCES processes,
  file_id          INTEGER NOT NULL REFERENCES files,
  events           INTEGER NOT NULL DEFAULT 0,  -- events that did not fail (as in activity)
  failed           INTEGER NOT NULL DEFAULT 0,  -- events that failed, counted nowhere else
  unsized          INTEGER NOT NULL DEFAULT 0,  -- reads and writes whose source gave no size (fanotify)
  first_seen       TEXT NOT NULL,               -- the time of the first and the last event
  last_seen        TEXT NOT NULL,
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
  overwrites       INTEGER NOT NULL DEFAULT 0,
  paging_reads     INTEGER NOT NULL DEFAULT 0,
  paging_read_bytes INTEGER NOT NULL DEFAULT 0,
  paging_writes    INTEGER NOT NULL DEFAULT 0,
  paging_write_bytes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (process_id, file_id)
) WITHOUT ROWID;
CREATE INDEX process_file_totals_by_file ON process_file_totals (file_id, process_id);

-- through_id: the last event the totals hold; pairs: the rows of
-- process_file_totals (kept by the triggers), which --max-size bounds.
CREATE TABLE totals_folded (through_id INTEGER NOT NULL, pairs INTEGER NOT NULL DEFAULT 0);
INSERT INTO totals_folded (through_id) SELECT coalesce(max(id), 0) FROM events;

-- What the database holds: activity rows (of kept and of pruned segments)
-- and hour_totals are every event once (sql/0007). Sizes known or not was
-- not recorded before: unsized starts at 0.
INSERT INTO process_file_totals (process_id, file_id, events, failed, first_seen, last_seen, reads, read_bytes, writes, write_bytes, opens, closes, cleanups, creates, deletes, renames, set_infos, flushes, disk_reads, disk_read_bytes, disk_writes, disk_write_bytes, close_writes, overwrites, paging_reads, paging_read_bytes, paging_writes, paging_write_bytes)
SELECT process_id, file_id, sum(events), sum(failed), strftime('%Y-%m-%dT%H:%M:%S', min(first_id) / 1000000000, 'unixepoch') || printf('.%07dZ', (min(first_id) % 1000000000) / 100), strftime('%Y-%m-%dT%H:%M:%S', max(last_id) / 1000000000, 'unixepoch') || printf('.%07dZ', (max(last_id) % 1000000000) / 100),
       sum(reads),
       sum(read_bytes),
       sum(writes),
       sum(write_bytes),
       sum(opens),
       sum(closes),
       sum(cleanups),
       sum(creates),
       sum(deletes),
       sum(renames),
       sum(set_infos),
       sum(flushes),
       sum(disk_reads),
       sum(disk_read_bytes),
       sum(disk_writes),
       sum(disk_write_bytes),
       sum(close_writes),
       sum(overwrites),
       sum(paging_reads),
       sum(paging_read_bytes),
       sum(paging_writes),
       sum(paging_write_bytes)
FROM (SELECT process_id, file_id, events, failed, first_id, last_id, reads, read_bytes, writes, write_bytes, opens, closes, cleanups, creates, deletes, renames, set_infos, flushes, disk_reads, disk_read_bytes, disk_writes, disk_write_bytes, close_writes, overwrites, paging_reads, paging_read_bytes, paging_writes, paging_write_bytes
      FROM activity
      UNION ALL
      SELECT process_id, file_id, events, failed, hour * 3600000000000, hour * 3600000000000 + 3599999999999,
             reads, read_bytes, writes, write_bytes, opens, closes, cleanups, creates, deletes, renames, set_infos, flushes, disk_reads, disk_read_bytes, disk_writes, disk_write_bytes, close_writes, overwrites, paging_reads, paging_read_bytes, paging_writes, paging_write_bytes
      FROM hour_totals)
GROUP BY process_id, file_id;

INSERT INTO file_totals (file_id, processes, events, failed, first_seen, last_seen, reads, read_bytes, writes, write_bytes, opens, closes, cleanups, creates, deletes, renames, set_infos, flushes, disk_reads, disk_read_bytes, disk_writes, disk_write_bytes, close_writes, overwrites, paging_reads, paging_read_bytes, paging_writes, paging_write_bytes)
SELECT file_id, count(*), sum(events), sum(failed), min(first_seen), max(last_seen),
       sum(reads),
       sum(read_bytes),
       sum(writes),
       sum(write_bytes),
       sum(opens),
       sum(closes),
       sum(cleanups),
       sum(creates),
       sum(deletes),
       sum(renames),
       sum(set_infos),
       sum(flushes),
       sum(disk_reads),
       sum(disk_read_bytes),
       sum(disk_writes),
       sum(disk_write_bytes),
       sum(close_writes),
       sum(overwrites),
       sum(paging_reads),
       sum(paging_read_bytes),
       sum(paging_writes),
       sum(paging_write_bytes)
FROM process_file_totals GROUP BY file_id;

INSERT INTO process_totals (process_id, files, events, failed, first_seen, last_seen, reads, read_bytes, writes, write_bytes, opens, closes, cleanups, creates, deletes, renames, set_infos, flushes, disk_reads, disk_read_bytes, disk_writes, disk_write_bytes, close_writes, overwrites, paging_reads, paging_read_bytes, paging_writes, paging_write_bytes)
SELECT process_id, count(*), sum(events), sum(failed), min(first_seen), max(last_seen),
       sum(reads),
       sum(read_bytes),
       sum(writes),
       sum(write_bytes),
       sum(opens),
       sum(closes),
       sum(cleanups),
       sum(creates),
       sum(deletes),
       sum(renames),
       sum(set_infos),
       sum(flushes),
       sum(disk_reads),
       sum(disk_read_bytes),
       sum(disk_writes),
       sum(disk_write_bytes),
       sum(close_writes),
       sum(overwrites),
       sum(paging_reads),
       sum(paging_read_bytes),
       sum(paging_writes),
       sum(paging_write_bytes)
FROM process_file_totals GROUP BY process_id;

UPDATE totals_folded SET pairs = (SELECT count(*) FROM process_file_totals);

CREATE TRIGGER process_file_totals_added AFTER INSERT ON process_file_totals BEGIN
  UPDATE file_totals SET processes = processes + 1 WHERE file_id = NEW.file_id;
  UPDATE process_totals SET files = files + 1 WHERE process_id = NEW.process_id;
  UPDATE totals_folded SET pairs = pairs + 1;
END;


-- One row per file: the place to start browsing.
CREATE VIEW v_file_totals AS
SELECT
  f.name AS path,
  t.events AS events,
  t.reads AS reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.read_bytes END AS read_bytes,
  t.writes AS writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.write_bytes END AS write_bytes,
  t.creates AS creates,
  t.deletes AS deletes,
  t.renames AS renames,
  t.failed AS failed,
  t.processes AS processes,
  t.first_seen AS first_seen,
  t.last_seen AS last_seen,
  t.opens AS opens,
  t.closes AS closes,
  t.cleanups AS cleanups,
  t.set_infos AS set_infos,
  t.flushes AS flushes,
  t.disk_reads AS disk_reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.disk_read_bytes END AS disk_read_bytes,
  t.disk_writes AS disk_writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.disk_write_bytes END AS disk_write_bytes,
  t.close_writes AS close_writes,
  t.overwrites AS overwrites,
  t.paging_reads AS paging_reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.paging_read_bytes END AS paging_read_bytes,
  t.paging_writes AS paging_writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.paging_write_bytes END AS paging_write_bytes,
  t.file_id AS file_id
FROM file_totals t LEFT JOIN v_files f ON f.file_id = t.file_id;

-- One row per process (a pid and its start: a reused pid is another row).
CREATE VIEW v_process_totals AS
SELECT
  p.image AS process,
  p.pid AS pid,
  p.user AS user,
  p.command_line AS command_line,
  p.parent_pid AS parent_pid,
  (SELECT pp.image FROM processes pp WHERE pp.pid = p.parent_pid AND pp.start_time <= p.start_time
   ORDER BY pp.start_time DESC LIMIT 1) AS parent,
  strftime('%Y-%m-%dT%H:%M:%S', p.start_time / 1000000000, 'unixepoch') || printf('.%07dZ', (p.start_time % 1000000000) / 100) AS started,
  t.files AS files,
  t.events AS events,
  t.reads AS reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.read_bytes END AS read_bytes,
  t.writes AS writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.write_bytes END AS write_bytes,
  t.creates AS creates,
  t.deletes AS deletes,
  t.renames AS renames,
  t.failed AS failed,
  t.first_seen AS first_seen,
  t.last_seen AS last_seen,
  t.opens AS opens,
  t.closes AS closes,
  t.cleanups AS cleanups,
  t.set_infos AS set_infos,
  t.flushes AS flushes,
  t.disk_reads AS disk_reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.disk_read_bytes END AS disk_read_bytes,
  t.disk_writes AS disk_writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.disk_write_bytes END AS disk_write_bytes,
  t.close_writes AS close_writes,
  t.overwrites AS overwrites,
  t.paging_reads AS paging_reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.paging_read_bytes END AS paging_read_bytes,
  t.paging_writes AS paging_writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.paging_write_bytes END AS paging_write_bytes,
  t.process_id AS process_id
FROM process_totals t LEFT JOIN processes p ON p.process_id = t.process_id;

-- One row per process and file it touched.
CREATE VIEW v_process_file_totals AS
SELECT
  p.image AS process,
  p.pid AS pid,
  f.name AS path,
  t.events AS events,
  t.reads AS reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.read_bytes END AS read_bytes,
  t.writes AS writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.write_bytes END AS write_bytes,
  t.creates AS creates,
  t.deletes AS deletes,
  t.renames AS renames,
  t.failed AS failed,
  t.first_seen AS first_seen,
  t.last_seen AS last_seen,
  t.opens AS opens,
  t.closes AS closes,
  t.cleanups AS cleanups,
  t.set_infos AS set_infos,
  t.flushes AS flushes,
  t.disk_reads AS disk_reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.disk_read_bytes END AS disk_read_bytes,
  t.disk_writes AS disk_writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.disk_write_bytes END AS disk_write_bytes,
  t.close_writes AS close_writes,
  t.overwrites AS overwrites,
  t.paging_reads AS paging_reads,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.paging_read_bytes END AS paging_read_bytes,
  t.paging_writes AS paging_writes,
  CASE WHEN t.unsized = 0 OR t.unsized < t.reads + t.writes + t.disk_reads + t.disk_writes + t.paging_reads + t.paging_writes THEN t.paging_write_bytes END AS paging_write_bytes,
  t.process_id AS process_id,
  t.file_id AS file_id
FROM process_file_totals t LEFT JOIN processes p ON p.process_id = t.process_id
LEFT JOIN v_files f ON f.file_id = t.file_id;

-- One row per run, with the time it covers (v_run_coverage) beside its counts.
DROP VIEW v_runs;
CREATE VIEW v_runs AS
SELECT
  r.run_id, r.source, r.live, r.host, r.pid, r.version,
  strftime('%Y-%m-%dT%H:%M:%SZ', r.started_at / 1000000000, 'unixepoch') AS started,
  strftime('%Y-%m-%dT%H:%M:%SZ', r.stopped_at / 1000000000, 'unixepoch') AS ended,
  strftime('%Y-%m-%dT%H:%M:%SZ', r.last_commit_at / 1000000000, 'unixepoch') AS last_commit,
  strftime('%Y-%m-%dT%H:%M:%SZ', c.covered_from / 1000000000, 'unixepoch') AS covered_from,
  strftime('%Y-%m-%dT%H:%M:%SZ', c.covered_until / 1000000000, 'unixepoch') AS covered_until,
  round((c.covered_until - c.covered_from) / 1e9, 3) AS covered_seconds,
  r.events_received, r.events_written, r.events_dropped, r.events_lost, r.events_excluded, r.events_own,
  r.bad_input, r.unresolved,
  CASE WHEN r.events_written > 0 THEN round(100.0 * (r.events_written - r.unresolved) / r.events_written, 1) END
    AS resolved_pct,
  r.rundown_names,
  coalesce(r.exit_reason, CASE WHEN r.stopped_at IS NULL THEN 'running or interrupted' END) AS exit_reason,
  r.clock
FROM collector_runs r LEFT JOIN v_run_coverage c ON c.run_id = r.run_id;
