-- Schema v7: a pruned segment alone in its hour keeps its activity rows.
--
-- Pruning used to add every pruned segment's activity rows into hour_totals
-- and delete them. At a low rate a segment is the whole of its hour, and the
-- copy had as many rows as the original: pruning cost as much as writing.
-- Now a segment that shares its hour with no other segment and no hourly
-- totals keeps its activity rows, which are its hourly totals already, and
-- only its events go; segments.pruned marks it. Segments of a busy hour are
-- still added into hour_totals, which holds each (hour, process, file) once
-- however many segments the hour had.
--
-- So, at every commit, for any hour:
--
--     hour_totals + activity (of kept and of pruned segments) = every event
--
-- The reports count a pruned segment's activity rows as they count
-- hour_totals: whole, for every hour the window touches. The listings follow
-- the activity rows of kept segments only.

ALTER TABLE segments ADD COLUMN pruned INTEGER;  -- 1: its events were pruned; its activity rows stay as totals
