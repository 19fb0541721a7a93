-- name: html-report
-- description: The figures behind etwaudit report --html that no canned report gives as they are.
--
-- The report's tables of files and processes, their drill-downs, its totals
-- and its count of unresolved names are added up in the program from the
-- window's activity rows (section rows), the way top-files, top-processes,
-- process-activity, summary and unresolved add up windowed_activity: one
-- pass over them instead of one per table, and no sorting for a GROUP BY. In the files and processes sections the program puts
-- the ids it needs in the IN list (integers only); span is the time the
-- window's data covers, to choose the timeline's bucket; a drill-down looks
-- for its latest events from the start of the last segment that has any
-- (segment_start), and only when too few are there in the whole window.

-- section: rows
-- (sized: some of its bytes are known; moving: it has events that move bytes)
SELECT process_id, file_id, events, failed, coalesce(read_bytes, 0), coalesce(write_bytes, 0),
       coalesce(disk_read_bytes + disk_write_bytes, disk_read_bytes, disk_write_bytes, 0) AS disk_bytes, segment_id,
       coalesce(read_bytes, write_bytes, disk_read_bytes, disk_write_bytes, paging_read_bytes, paging_write_bytes)
         IS NOT NULL AS sized,
       reads + writes + disk_reads + disk_writes + paging_reads + paging_writes > 0 AS moving
FROM windowed_activity;

-- section: files
SELECT f.file_id, f.name, f.path IS NULL AND f.nt_path IS NULL AS unresolved
FROM v_files AS f
WHERE f.file_id IN (ID_LIST);

-- section: processes
SELECT p.process_id, p.image, p.pid, p.user, iso_time(p.start_time) AS started
FROM processes AS p
WHERE p.process_id IN (ID_LIST);

-- section: span
SELECT max(b.lo, (SELECT min(minute) FROM minute_totals) * 60000000000),
       min(b.hi, (SELECT max(minute) + 1 FROM minute_totals) * 60000000000 - 1)
FROM bounds AS b;

-- section: segment_start
SELECT min_time FROM segments WHERE segment_id = :segment;

-- section: retention
SELECT pruned_before, totals_pruned_before FROM retention WHERE pruned_before IS NOT NULL;
