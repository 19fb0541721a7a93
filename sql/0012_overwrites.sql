-- Schema v12: an open that replaced or truncated an existing file is an
-- overwrite.
--
-- Windows' OperationEnd of a Create says what it did to the file: created
-- it (FILE_CREATED 2: a create), opened it (FILE_OPENED 1: an open), or
-- replaced it (FILE_SUPERSEDED 0) or cut it to nothing (FILE_OVERWRITTEN 3).
-- Recorded as a plain open, an overwrite that wrote nothing after it left no
-- trace of what it did. It is an operation of its own rather than a flag on
-- the open: every report counts and filters operations (--op overwrite), so
-- "who overwrote X" needs nothing new, where a flag would need a column in
-- each event table and every report to learn it. fanotify cannot tell an
-- O_TRUNC open from another: on Linux there are none.

INSERT INTO ops (op, name, description) VALUES
  (13, 'overwrite', 'existing file replaced or truncated as it was opened (Windows)');
ALTER TABLE activity ADD COLUMN overwrites INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hour_totals ADD COLUMN overwrites INTEGER NOT NULL DEFAULT 0;
