-- Schema v14: paging I/O is counted apart from what programs read and write.
--
-- FileIo Read and Write events of paging I/O (IoFlags IRP_PAGING_IO 0x2 or
-- IRP_SYNCHRONOUS_PAGING_IO 0x40) are the cache manager's lazy writer and
-- the memory manager moving pages between a file and memory: the bytes a
-- program wrote through the cache are written again by the lazy writer,
-- attributed to System, and a mapped file's pages are read in by faults.
-- Counted as reads and writes they doubled a file's write bytes and gave
-- System the busiest files. They are operations of their own, so that the
-- byte totals (read_bytes, write_bytes) are the programs' and every report
-- can still show them (--op paging_read --op paging_write).

INSERT INTO ops (op, name, description) VALUES
  (14, 'paging_read', 'pages read into memory from the file: a mapped file or the cache (Windows paging I/O)'),
  (15, 'paging_write', 'pages written from memory to the file: the lazy writer or a mapped file (Windows paging I/O)');
ALTER TABLE activity ADD COLUMN paging_reads INTEGER NOT NULL DEFAULT 0;
ALTER TABLE activity ADD COLUMN paging_read_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE activity ADD COLUMN paging_writes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE activity ADD COLUMN paging_write_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hour_totals ADD COLUMN paging_reads INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hour_totals ADD COLUMN paging_read_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hour_totals ADD COLUMN paging_writes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hour_totals ADD COLUMN paging_write_bytes INTEGER NOT NULL DEFAULT 0;
