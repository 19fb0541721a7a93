-- name: process-activity
-- description: What a process (image glob or pid) read and wrote, per file.
-- argument: process  an image glob (notepad.exe, *\Office16\*) or a pid
-- limit: 1000  rows a table shows unless --limit says otherwise; exports show all
-- count: column total_rows
-- (parent: the newest process of the parent pid that started before this one.)
SELECT p.image AS process, p.pid, p.user, f.name AS path,
       t.reads, t.read_bytes, t.writes, t.write_bytes, t.events, t.failed,
       p.parent_pid AS ppid,
       (SELECT pp.image FROM processes AS pp
        WHERE pp.pid = p.parent_pid AND coalesce(pp.start_time, 0) <= coalesce(p.start_time, 0)
        ORDER BY pp.start_time DESC LIMIT 1) AS parent,
       p.command_line, t.total_rows
FROM (
  SELECT process_id, file_id,
         -- bytes NULL where the events had no sizes (fanotify), 0 where there were none
         sum(reads) AS reads, coalesce(sum(read_bytes), CASE WHEN sum(reads) = 0 THEN 0 END) AS read_bytes,
         sum(writes) AS writes, coalesce(sum(write_bytes), CASE WHEN sum(writes) = 0 THEN 0 END) AS write_bytes,
         sum(events) AS events, sum(failed) AS failed,
         count(*) OVER () AS total_rows  -- before the LIMIT: how many there are (taken off the table)
  FROM windowed_activity
  GROUP BY process_id, file_id
  HAVING sum(events) > 0 OR (:failed_only AND sum(failed) > 0)) AS t
JOIN processes AS p ON p.process_id = t.process_id
JOIN v_files AS f ON f.file_id = t.file_id
ORDER BY coalesce(t.read_bytes, 0) + coalesce(t.write_bytes, 0) DESC, t.events DESC, t.failed DESC, path
LIMIT :limit
