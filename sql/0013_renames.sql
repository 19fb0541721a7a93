-- Schema v13: a rename names both files.
--
-- A rename is two events, one under each name, so that the history of
-- either name shows it; each says what the file was called before and what
-- after. The pair lives beside the events in renames, keyed by the event's
-- id, rather than in two more columns of every event table: renames are
-- rare, and a column costs every event a byte. Retention deletes a pruned
-- segment's renames with its events. A rename whose names the source could
-- not tell (fanotify before Linux 5.17, a Windows trace that names only
-- one) has no row here.
--
-- v_events shows the pair as its last two columns, renamed_from and
-- renamed_to (NULL for every other event); they are read only when a query
-- asks for them.

CREATE TABLE renames (
  event_id     INTEGER PRIMARY KEY,
  from_file_id INTEGER NOT NULL REFERENCES files,
  to_file_id   INTEGER NOT NULL REFERENCES files
);

DROP VIEW v_events;
CREATE VIEW v_events AS
SELECT
  strftime('%Y-%m-%dT%H:%M:%S', t.time_ns / 1000000000, 'unixepoch')
    || printf('.%07dZ', (t.time_ns % 1000000000) / 100) AS time,
  t.pid                                                 AS pid,
  t.process                                             AS process,
  t.user                                                AS user,
  (SELECT o.name FROM ops o WHERE o.op = t.op)          AS op,
  t.path                                                AS path,
  t.offset                                              AS offset,
  t.size                                                AS size,
  coalesce(t.count, 1)                                  AS count,
  CASE WHEN t.count > 1 THEN coalesce(t.end_offset, t.offset + t.size) END AS end_offset,
  CASE WHEN t.status IS NOT NULL THEN printf('0x%08X', t.status) END AS status,
  t.tid                                                 AS tid,
  t.time_ns                                             AS time_ns,
  t.event_id                                            AS event_id,
  t.process_id                                          AS process_id,
  t.parent_pid                                          AS parent_pid,
  t.command_line                                        AS command_line,
  (SELECT f.name FROM renames r JOIN v_files f ON f.file_id = r.from_file_id
   WHERE r.event_id = t.event_id)                       AS renamed_from,
  (SELECT f.name FROM renames r JOIN v_files f ON f.file_id = r.to_file_id
   WHERE r.event_id = t.event_id)                       AS renamed_to
FROM (
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_00 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 0)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_00 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 0)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_01 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 1)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_01 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 1)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_02 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 2)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_02 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 2)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_03 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 3)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_03 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 3)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_04 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 4)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_04 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 4)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_05 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 5)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_05 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 5)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_06 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 6)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_06 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 6)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_07 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 7)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_07 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 7)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_08 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 8)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_08 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 8)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_09 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 9)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_09 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 9)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_10 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 10)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_10 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 10)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_11 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 11)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_11 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 11)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_12 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 12)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_12 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 12)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_13 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 13)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_13 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 13)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_14 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 14)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_14 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 14)
      UNION ALL
      SELECT e.id AS time_ns, e.id AS event_id, p.pid, p.image AS process, p.user, e.tid, e.op, f.name AS path,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_15 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 15)
      UNION ALL
      SELECT e.ts, e.id, p.pid, p.image, p.user, e.tid, e.op, f.name,
             e.offset, e.size, e.count, e.end_offset, e.status, p.process_id, p.parent_pid, p.command_line
      FROM events_15 e JOIN processes p ON p.process_id = e.process_id JOIN v_files f ON f.file_id = e.file_id
      WHERE e.ts IS NOT NULL AND e.id >= (SELECT kept_from FROM event_slots WHERE slot = 15)) AS t;
