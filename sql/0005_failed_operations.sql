-- Schema v5: operations that failed are counted apart.
--
-- An open of a file that does not exist, a read refused, a delete denied:
-- on Windows each has an NTSTATUS error (events.status) and changed nothing.
-- They stay in events, marked, but the totals no longer count them as
-- operations: activity.events, the per-operation columns and minute_totals
-- count the operations that succeeded (or whose result is unknown), and
-- activity.failed the others, of every operation together. top-files and
-- top-processes show it; query --failed lists and ranks only them.
--
-- The hourly totals of segments pruned before this version counted failed
-- operations as the others: they stay as they were.

ALTER TABLE activity ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;     -- failed events (any operation)
ALTER TABLE hour_totals ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;

-- Databases written by schema v4 counted them as the others: take them out.
-- Each failed event's segment is the last one starting at or before it.
CREATE INDEX migration_segments_by_first_id ON segments (first_id);

CREATE TEMP TABLE failed_events AS
SELECT (SELECT max(s.segment_id) FROM segments s WHERE s.first_id <= e.id) AS segment_id,
       e.process_id, e.file_id, e.op,
       CASE WHEN coalesce(e.ts, e.id) >= 0 THEN coalesce(e.ts, e.id) / 60000000000
            ELSE (coalesce(e.ts, e.id) + 1) / 60000000000 - 1 END AS minute,
       coalesce(e.count, 1) AS events
FROM events e
WHERE e.status IS NOT NULL;

CREATE TEMP TABLE failed_by_row AS
SELECT segment_id, process_id, file_id, sum(events) AS events,
       sum(CASE op WHEN 0 THEN events ELSE 0 END) AS reads,
       sum(CASE op WHEN 1 THEN events ELSE 0 END) AS writes,
       sum(CASE op WHEN 2 THEN events ELSE 0 END) AS opens,
       sum(CASE op WHEN 3 THEN events ELSE 0 END) AS closes,
       sum(CASE op WHEN 4 THEN events ELSE 0 END) AS cleanups,
       sum(CASE op WHEN 5 THEN events ELSE 0 END) AS creates,
       sum(CASE op WHEN 6 THEN events ELSE 0 END) AS deletes,
       sum(CASE op WHEN 7 THEN events ELSE 0 END) AS renames,
       sum(CASE op WHEN 8 THEN events ELSE 0 END) AS set_infos,
       sum(CASE op WHEN 9 THEN events ELSE 0 END) AS flushes,
       sum(CASE op WHEN 10 THEN events ELSE 0 END) AS disk_reads,
       sum(CASE op WHEN 11 THEN events ELSE 0 END) AS disk_writes,
       sum(CASE op WHEN 12 THEN events ELSE 0 END) AS close_writes
FROM failed_events
WHERE segment_id IS NOT NULL
GROUP BY segment_id, process_id, file_id;

-- rows stays what it was: NULL meant "as many as events", which now shrinks.
UPDATE activity SET
  rows = nullif(coalesce(activity.rows, activity.events), activity.events - f.events),
  events = activity.events - f.events,
  failed = activity.failed + f.events,
  reads = activity.reads - f.reads,
  writes = activity.writes - f.writes,
  opens = activity.opens - f.opens,
  closes = activity.closes - f.closes,
  cleanups = activity.cleanups - f.cleanups,
  creates = activity.creates - f.creates,
  deletes = activity.deletes - f.deletes,
  renames = activity.renames - f.renames,
  set_infos = activity.set_infos - f.set_infos,
  flushes = activity.flushes - f.flushes,
  disk_reads = activity.disk_reads - f.disk_reads,
  disk_writes = activity.disk_writes - f.disk_writes,
  close_writes = activity.close_writes - f.close_writes
FROM failed_by_row f
WHERE activity.segment_id = f.segment_id AND activity.process_id = f.process_id AND activity.file_id = f.file_id;

-- A failed read or write moved no bytes (size 0): only the counts change.
UPDATE minute_totals SET events = minute_totals.events - f.events
FROM (SELECT minute, op, sum(events) AS events FROM failed_events GROUP BY minute, op) f
WHERE minute_totals.minute = f.minute AND minute_totals.op = f.op;
DELETE FROM minute_totals WHERE events <= 0;

DROP TABLE failed_by_row;
DROP TABLE failed_events;
DROP INDEX migration_segments_by_first_id;
