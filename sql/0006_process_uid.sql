-- Schema v6: the numeric user of a Linux process.
--
-- processes.user holds a name (Linux: the name of the process's real uid;
-- Windows: DOMAIN\user). uid keeps the number itself, which tells users apart
-- when the name is unknown or reused, and is what a Linux admin filters by.
ALTER TABLE processes ADD COLUMN uid INTEGER;  -- Linux: the real uid; NULL on Windows and when unknown
