-- name: file-history
-- description: Who touched a path or glob, in time order.
-- argument: path  a path or glob: notes.txt, *.docx, C:\Users\*\notes.txt
-- limit: 1000  rows a table shows unless --limit says otherwise; exports show all
-- count: SELECT rows, exact FROM windowed_rows
-- reads: events
-- (renamed: a rename's other name, the file's name before it (from) or after it (to).)
-- (parent: the newest process of the parent pid that started before this one.)
SELECT iso_time(e.time) AS time, p.image AS process, p.pid, p.user, o.name AS op,
       f.name AS path, e.offset, e.size, e.count, CASE WHEN e.status IS NOT NULL THEN printf('0x%08X', e.status) END AS status,
       (SELECT CASE WHEN r.to_file_id = e.file_id THEN 'from ' || n.name ELSE 'to ' || n.name END
        FROM renames AS r JOIN v_files AS n
          ON n.file_id = CASE WHEN r.to_file_id = e.file_id THEN r.from_file_id ELSE r.to_file_id END
        WHERE r.event_id = e.id) AS renamed,
       p.parent_pid AS ppid,
       (SELECT pp.image FROM processes AS pp
        WHERE pp.pid = p.parent_pid AND coalesce(pp.start_time, 0) <= coalesce(p.start_time, 0)
        ORDER BY pp.start_time DESC LIMIT 1) AS parent,
       p.command_line
-- (The events are taken first: oldest_events reads one table per slot, and merges them
-- in order only when nothing is joined to it.)
FROM (SELECT * FROM oldest_events AS e ORDER BY e.time, e.id LIMIT :limit) AS e
JOIN processes AS p ON p.process_id = e.process_id
JOIN v_files AS f ON f.file_id = e.file_id
JOIN ops AS o ON o.op = e.op
ORDER BY e.time, e.id
LIMIT :limit
