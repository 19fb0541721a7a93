-- name: summary
-- description: Events and bytes per operation, with the processes and files involved.
WITH per_op (op, events, bytes, process_id, file_id) AS (
  SELECT 0,  reads,        read_bytes,       process_id, file_id FROM activity WHERE reads > 0        UNION ALL
  SELECT 1,  writes,       write_bytes,      process_id, file_id FROM activity WHERE writes > 0       UNION ALL
  SELECT 2,  opens,        NULL,             process_id, file_id FROM activity WHERE opens > 0        UNION ALL
  SELECT 3,  closes,       NULL,             process_id, file_id FROM activity WHERE closes > 0       UNION ALL
  SELECT 4,  cleanups,     NULL,             process_id, file_id FROM activity WHERE cleanups > 0     UNION ALL
  SELECT 5,  creates,      NULL,             process_id, file_id FROM activity WHERE creates > 0      UNION ALL
  SELECT 6,  deletes,      NULL,             process_id, file_id FROM activity WHERE deletes > 0      UNION ALL
  SELECT 7,  renames,      NULL,             process_id, file_id FROM activity WHERE renames > 0      UNION ALL
  SELECT 8,  set_infos,    NULL,             process_id, file_id FROM activity WHERE set_infos > 0    UNION ALL
  SELECT 9,  flushes,      NULL,             process_id, file_id FROM activity WHERE flushes > 0      UNION ALL
  SELECT 10, disk_reads,   disk_read_bytes,  process_id, file_id FROM activity WHERE disk_reads > 0   UNION ALL
  SELECT 11, disk_writes,  disk_write_bytes, process_id, file_id FROM activity WHERE disk_writes > 0  UNION ALL
  SELECT 12, close_writes, NULL,             process_id, file_id FROM activity WHERE close_writes > 0
)
SELECT o.name                     AS op,
       sum(p.events)              AS events,
       sum(p.bytes)               AS bytes,
       count(DISTINCT process_id) AS processes,
       count(DISTINCT file_id)    AS files
FROM per_op AS p
JOIN ops AS o ON o.op = p.op
GROUP BY p.op
ORDER BY events DESC, o.name
