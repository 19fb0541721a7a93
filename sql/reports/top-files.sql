-- name: top-files
-- description: Files by bytes read and written, with their events and the processes that touched them (--failed: by failed operations).
-- param: limit  rows (default 20)
SELECT f.name AS path,
       t.read_bytes, t.write_bytes, t.disk_bytes, t.events, t.processes, t.failed
FROM (
  SELECT file_id,
         sum(read_bytes)                            AS read_bytes,
         sum(write_bytes)                           AS write_bytes,
         sum(disk_read_bytes) + sum(disk_write_bytes) AS disk_bytes,
         sum(events)                                AS events,
         sum(failed)                                AS failed,
         count(DISTINCT CASE WHEN events > 0 OR (:failed_only AND failed > 0) THEN process_id END) AS processes
  FROM windowed_activity
  GROUP BY file_id) AS t
JOIN v_files AS f ON f.file_id = t.file_id
WHERE t.events > 0 OR (:failed_only AND t.failed > 0)
ORDER BY t.read_bytes + t.write_bytes + t.disk_bytes DESC, t.events DESC, t.failed DESC, path
LIMIT coalesce(:limit, 20)
