-- name: process-activity
-- description: What a process (image glob or pid) read and wrote, per file.
-- argument: process  an image glob (notepad.exe, *\Office16\*) or a pid
-- param: limit  rows (default 1000)
SELECT p.image AS process, p.pid, p.user, f.name AS path,
       t.reads, t.read_bytes, t.writes, t.write_bytes, t.events, t.failed
FROM (
  SELECT process_id, file_id,
         sum(reads) AS reads, sum(read_bytes) AS read_bytes,
         sum(writes) AS writes, sum(write_bytes) AS write_bytes,
         sum(events) AS events, sum(failed) AS failed
  FROM windowed_activity
  GROUP BY process_id, file_id) AS t
JOIN processes AS p ON p.process_id = t.process_id
JOIN v_files AS f ON f.file_id = t.file_id
WHERE t.events > 0 OR (:failed_only AND t.failed > 0)
ORDER BY t.read_bytes + t.write_bytes DESC, t.events DESC, t.failed DESC, path
LIMIT coalesce(:limit, 1000)
