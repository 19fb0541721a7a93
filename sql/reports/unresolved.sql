-- name: unresolved
-- description: Events whose file name is still unknown, by process.
-- param: limit  rows (default 50)
SELECT p.image AS process, p.pid, t.events, t.file_keys
FROM (
  SELECT a.process_id, sum(a.events) AS events, count(DISTINCT CASE WHEN a.events > 0 THEN a.file_id END) AS file_keys
  FROM windowed_activity AS a JOIN v_files AS f ON f.file_id = a.file_id
  WHERE f.path IS NULL AND f.nt_path IS NULL
  GROUP BY a.process_id) AS t
JOIN processes AS p ON p.process_id = t.process_id
WHERE t.events > 0
ORDER BY t.events DESC, process
LIMIT coalesce(:limit, 50)
