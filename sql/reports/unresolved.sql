-- name: unresolved
-- description: Events whose file name is still unknown, by process.
-- limit: 50  rows a table shows unless --limit says otherwise; exports show all
-- count: column total_rows
SELECT p.image AS process, p.pid, t.events, t.file_keys, t.total_rows
FROM (
  SELECT a.process_id, sum(a.events) AS events, count(DISTINCT CASE WHEN a.events > 0 THEN a.file_id END) AS file_keys,
         count(*) OVER () AS total_rows  -- before the LIMIT: how many there are (taken off the table)
  FROM windowed_activity AS a JOIN v_files AS f ON f.file_id = a.file_id
  WHERE f.path IS NULL AND f.nt_path IS NULL
  GROUP BY a.process_id
  HAVING sum(a.events) > 0) AS t
JOIN processes AS p ON p.process_id = t.process_id
ORDER BY t.events DESC, process
LIMIT :limit
