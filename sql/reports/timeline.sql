-- name: timeline
-- description: Events and bytes per time bucket (--bucket 1m, 1h or 1d) and operation.
-- param: bucket  bucket length in ns, from --bucket (default 1h)
WITH coarse AS (
  SELECT (hour * 3600000000000) / :bucket * :bucket AS bucket,
         sum(reads) AS reads, sum(read_bytes) AS read_bytes,
         sum(writes) AS writes, sum(write_bytes) AS write_bytes,
         sum(opens) AS opens,
         sum(closes) AS closes,
         sum(cleanups) AS cleanups,
         sum(creates) AS creates,
         sum(deletes) AS deletes,
         sum(renames) AS renames,
         sum(set_infos) AS set_infos,
         sum(flushes) AS flushes,
         sum(disk_reads) AS disk_reads, sum(disk_read_bytes) AS disk_read_bytes,
         sum(disk_writes) AS disk_writes, sum(disk_write_bytes) AS disk_write_bytes,
         sum(close_writes) AS close_writes
  FROM windowed_activity
  WHERE :bucket >= 3600000000000
  GROUP BY 1),
fine AS (
  SELECT time / :bucket * :bucket AS bucket, op, count(*) AS events, sum(size) AS bytes
  FROM windowed_events
  WHERE :bucket < 3600000000000
  GROUP BY 1, 2),
unpivoted AS (
  SELECT t.bucket, o.op,
         CASE o.op WHEN 0 THEN t.reads WHEN 1 THEN t.writes WHEN 2 THEN t.opens WHEN 3 THEN t.closes WHEN 4
       THEN t.cleanups WHEN 5 THEN t.creates WHEN 6 THEN t.deletes WHEN 7 THEN t.renames WHEN 8 THEN
       t.set_infos WHEN 9 THEN t.flushes WHEN 10 THEN t.disk_reads WHEN 11 THEN t.disk_writes WHEN
       12 THEN t.close_writes END AS events,
         CASE o.op WHEN 0 THEN t.read_bytes WHEN 1 THEN t.write_bytes WHEN 10 THEN t.disk_read_bytes WHEN 11
       THEN t.disk_write_bytes END AS bytes
  FROM coarse AS t, ops AS o
  UNION ALL
  SELECT bucket, op, events, bytes FROM fine)
SELECT iso_time(u.bucket) AS bucket, o.name AS op, u.events, u.bytes
FROM unpivoted AS u JOIN ops AS o ON o.op = u.op
WHERE u.events > 0
ORDER BY u.bucket, u.op
LIMIT coalesce(:limit, -1)
