-- Schema v18: names learned after their events were sent elsewhere.
--
-- A file can get its name after its first events were written (ETW names
-- a file object when it is created or at the rundown; until then its rows
-- point at an unresolved file), and a process its command line (Linux
-- reads it once the exec has taken effect). Events already delivered to a
-- destination went without the name. While there are destinations, the
-- writer logs each such late name here; a shipper sends the events of that
-- file or process it had delivered again, with the name (the central table
-- keeps the newest copy of each event), and then moves names_through.
CREATE TABLE name_changes (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a cursor follows it
  file_id    INTEGER,                            -- a file named late (or that took another's events)
  process_id INTEGER                             -- a process whose command line came late
);
ALTER TABLE destinations ADD COLUMN names_through INTEGER NOT NULL DEFAULT 0;
