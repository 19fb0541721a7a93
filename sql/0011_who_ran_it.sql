-- Schema v11: v_events says who ran each event's process.
--
-- A browser's user sees the process row's id (to join processes, or to tell
-- two runs of one program apart), its parent's pid and its command line
-- beside each event; they come after the columns v_events had, so that
-- queries by column position keep working. The view is otherwise as in
-- sql/0009 (two parts per slot table, which SQLite flattens, so that a
-- condition on time_ns still goes to each table's key).

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
  t.command_line                                        AS command_line
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
