-- name: recent
-- description: The latest events, newest first.
-- param: limit  how many events (default 50)
SELECT time, pid, process, op, path, offset, size
FROM v_events
ORDER BY event_id DESC
LIMIT coalesce(:limit, 50)
