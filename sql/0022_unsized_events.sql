-- Schema v22: the totals count the events that moved bytes without a size.
--
-- fanotify tells that a file was read or written, never how much; its
-- events' size is NULL and added nothing to read_bytes and the like, so a
-- report over its runs showed "0 B". With a count of those events beside
-- the bytes, a reader tells a known 0 from an unknown size per row: the
-- filters' windowed_activity gives an operation's bytes as NULL where none
-- of the row's events of it had a size, and the reports show them empty.
--
-- unsized: events of a row whose operation moves bytes (read, write, disk,
-- paging) and that had no size. The sources record sizes for all of an
-- operation's events or for none, so a row (one segment, of one run) has
-- either; hour_totals and minute_totals rows may mix runs and then give the
-- known bytes.
ALTER TABLE activity ADD COLUMN unsized INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hour_totals ADD COLUMN unsized INTEGER NOT NULL DEFAULT 0;
ALTER TABLE minute_totals ADD COLUMN unsized INTEGER NOT NULL DEFAULT 0;

-- What was written before: the rows of fanotify's runs had no sizes at all.
-- An activity row by its segment's time, within such a run's events; the
-- hourly and minute totals where such a run alone covered the time.
UPDATE activity
SET unsized = reads + writes + disk_reads + disk_writes + paging_reads + paging_writes
WHERE segment_id IN (
  SELECT s.segment_id FROM collector_runs AS r JOIN segments AS s
    ON s.min_time >= r.first_event_at AND s.max_time <= r.last_event_at
  WHERE r.source = 'fanotify');

UPDATE hour_totals
SET unsized = reads + writes + disk_reads + disk_writes + paging_reads + paging_writes
WHERE EXISTS (
    SELECT 1 FROM collector_runs AS r
    WHERE r.source = 'fanotify'
      AND hour BETWEEN r.first_event_at / 3600000000000 AND r.last_event_at / 3600000000000)
  AND NOT EXISTS (
    SELECT 1 FROM collector_runs AS o
    WHERE o.source != 'fanotify'
      AND o.first_event_at < (hour + 1) * 3600000000000 AND o.last_event_at >= hour * 3600000000000);

-- The minutes that hold such events, so that a query tells at once whether
-- its window has any (most databases have none: Windows records every size).
CREATE INDEX minute_totals_unsized ON minute_totals (minute) WHERE unsized > 0;

UPDATE minute_totals
SET unsized = events
WHERE op IN (0, 1, 10, 11, 14, 15)  -- read, write, disk_read, disk_write, paging_read, paging_write
  AND EXISTS (
    SELECT 1 FROM collector_runs AS r
    WHERE r.source = 'fanotify'
      AND minute BETWEEN r.first_event_at / 60000000000 AND r.last_event_at / 60000000000)
  AND NOT EXISTS (
    SELECT 1 FROM collector_runs AS o
    WHERE o.source != 'fanotify'
      AND o.first_event_at < (minute + 1) * 60000000000 AND o.last_event_at >= minute * 60000000000);

-- The browsing totals (sql/0021) were made from those rows with unsized 0;
-- what the writer folded since counted them. Each row takes the larger.
-- The marked rows summed per pair once (none without a fanotify run), then
-- per file and per process from those sums.
CREATE TEMP TABLE unsized_pairs AS
SELECT process_id, file_id, sum(unsized) AS unsized FROM (
  SELECT process_id, file_id, unsized FROM activity WHERE unsized > 0
  UNION ALL
  SELECT process_id, file_id, unsized FROM hour_totals WHERE unsized > 0)
WHERE EXISTS (SELECT 1 FROM collector_runs WHERE source = 'fanotify')
GROUP BY process_id, file_id;

UPDATE process_file_totals SET unsized = max(process_file_totals.unsized, p.unsized)
FROM unsized_pairs AS p
WHERE p.process_id = process_file_totals.process_id AND p.file_id = process_file_totals.file_id;

UPDATE file_totals SET unsized = max(file_totals.unsized, f.unsized)
FROM (SELECT file_id, sum(unsized) AS unsized FROM unsized_pairs GROUP BY file_id) AS f
WHERE f.file_id = file_totals.file_id;

UPDATE process_totals SET unsized = max(process_totals.unsized, p.unsized)
FROM (SELECT process_id, sum(unsized) AS unsized FROM unsized_pairs GROUP BY process_id) AS p
WHERE p.process_id = process_totals.process_id;

DROP TABLE unsized_pairs;
