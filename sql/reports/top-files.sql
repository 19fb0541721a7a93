-- name: top-files
-- description: Files by bytes read and written, with their events and the processes that touched them (--failed: by failed operations).
-- limit: 20  rows a table shows unless --limit says otherwise; exports show all
-- count: column total_rows
SELECT f.name AS path,
       t.read_bytes, t.write_bytes, t.disk_bytes, t.events, t.processes, t.failed, t.total_rows
FROM (
  SELECT file_id,
         -- NULL where the events had no sizes (fanotify), 0 where there were none
         coalesce(sum(read_bytes), CASE WHEN sum(reads) = 0 THEN 0 END)   AS read_bytes,
         coalesce(sum(write_bytes), CASE WHEN sum(writes) = 0 THEN 0 END) AS write_bytes,
         -- (every source that sees disk I/O sizes it; disk_reads and disk_writes,
         -- far into the row, are not read)
         coalesce(sum(disk_read_bytes) + sum(disk_write_bytes), sum(disk_read_bytes), sum(disk_write_bytes), 0)
                                                                          AS disk_bytes,
         sum(events)                                AS events,
         sum(failed)                                AS failed,
         count(DISTINCT CASE WHEN events > 0 OR (:failed_only AND failed > 0) THEN process_id END) AS processes,
         count(*) OVER () AS total_rows  -- before the LIMIT: how many there are (taken off the table)
  FROM windowed_activity
  GROUP BY file_id
  HAVING sum(events) > 0 OR (:failed_only AND sum(failed) > 0)) AS t
JOIN v_files AS f ON f.file_id = t.file_id
ORDER BY coalesce(t.read_bytes, 0) + coalesce(t.write_bytes, 0) + coalesce(t.disk_bytes, 0) DESC, t.events DESC, t.failed DESC, path
LIMIT :limit
