-- Schema v23: the writer counts the pairs new to process_file_totals.
--
-- A trigger counted each new pair into its file's and its process's row and
-- into totals_folded.pairs: three more row updates for every pair seen for
-- the first time, in the folds of a busy first hour most of their cost. The
-- writer knows which pairs are new as it folds them and adds the counts to
-- the rows it writes anyway (store/browsing_totals.cpp).
DROP TRIGGER IF EXISTS process_file_totals_added;
