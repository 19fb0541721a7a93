/* The records the eBPF program (file_io.bpf.c) puts in its ring buffer and
 * the source (ebpf_decoder.cpp) reads: plain C, the same layout on both
 * sides. Every record begins with a header; times are the kernel's boot
 * clock (bpf_ktime_get_boot_ns), ns. */
#ifndef ETWAUDIT_EBPF_RECORDS_H
#define ETWAUDIT_EBPF_RECORDS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ETWAUDIT_PATH_MAX 4096                        /* bytes of a path, its NUL included */
#define ETWAUDIT_ARGS_MAX 1024                        /* bytes of a command line (NUL-separated arguments) */
#define ETWAUDIT_PATH_DEPTH 64                        /* components of a path walked; deeper ones are cut at the top */
#define ETWAUDIT_NAME_AREA 256                        /* a component's name, NUL included (NAME_MAX + 1) */
#define ETWAUDIT_PATH_AREA (ETWAUDIT_PATH_MAX + 1024) /* a path, and room for a name as given after a directory's */

enum etwaudit_record_type {
  ETWAUDIT_RECORD_OPEN = 1,  /* an open that returned a descriptor of a regular file */
  ETWAUDIT_RECORD_READ = 2,  /* read, pread64, readv, preadv */
  ETWAUDIT_RECORD_WRITE = 3, /* write, pwrite64, writev, pwritev */
  ETWAUDIT_RECORD_CLOSE = 4,
  ETWAUDIT_RECORD_EXEC = 5,   /* a process became a new program */
  ETWAUDIT_RECORD_FORK = 6,   /* a new process (not a thread) */
  ETWAUDIT_RECORD_EXIT = 7,   /* a process ended (its last thread) */
  ETWAUDIT_RECORD_DELETE = 8, /* unlink, unlinkat: the name at ETWAUDIT_RECORD_PATH */
  ETWAUDIT_RECORD_RENAME = 9, /* rename, renameat, renameat2: the old name, then the new at ETWAUDIT_RECORD_SECOND */
};

struct etwaudit_record_header {
  __u32 type; /* enum etwaudit_record_type */
  __u32 tgid; /* the process (for FORK: the new one) */
  __u32 tid;
  __u32 size; /* bytes of the whole record */
  __u64 time; /* boot clock ns */
};

/* READ, WRITE, CLOSE; OPEN and DELETE, followed by path_size bytes of the
 * path; RENAME with the old path there and the new one (path2_size bytes)
 * at ETWAUDIT_RECORD_SECOND. */
struct etwaudit_file_record {
  struct etwaudit_record_header header;
  __s64 fd;
  __s64 offset; /* where the transfer began; -1 when unknown */
  __s64 result; /* bytes moved, or -errno */
  __u64 dev;    /* the file's superblock device and inode: the same file whatever its descriptor */
  __u64 ino;
  __u32 path_size;  /* OPEN, DELETE, RENAME: bytes of the path after the record, its NUL included */
  __u32 flags;      /* OPEN: the open flags */
  __u32 created;    /* OPEN: 1 when the open created the file (FMODE_CREATED) */
  __u32 path2_size; /* RENAME: bytes of the new path, its NUL included */
  __u64 open_seq;   /* OPEN with path filters: this open's number (see etwaudit_verdict), else 0 */
};

/* Path filters in the kernel (collect --include-path, --exclude-path;
 * sources/live/ebpf_path_verdicts.h). A read, write or close carries no
 * name, so the program leaves a file out by a verdict on the file, made
 * from the name of its last open: by the program itself at the open, or by
 * the collector after it. Each open of a file gets the next number
 * (`last_opens` keeps the last per file): a verdict holds for the open it
 * was made from and no later one, so a file opened again under another
 * name (a hard link, an inode used again) is judged again and nothing of
 * it is lost meanwhile. */
/* At an open the program judges the file itself by the globs that are a
 * literal path and a '*' (the collector's by the rest): up to
 * ETWAUDIT_PREFIXES of --include-path's and as many of --exclude-path's,
 * each of at most ETWAUDIT_PREFIX_MAX bytes. */
#define ETWAUDIT_PREFIXES 8
#define ETWAUDIT_PREFIX_MAX 256

struct etwaudit_file_key {
  __u64 dev;
  __u64 ino;
};

struct etwaudit_verdict {
  __u64 open_seq; /* the open it was made from; 0: a file opened before the collector */
  __u32 left_out; /* 1: record nothing of the file but its opens */
  __u32 unused;
};

/* EXEC: the program's path (path_size bytes, its NUL included) at
 * ETWAUDIT_EXEC_PATH from the record's start, and its arguments (args_size
 * bytes, each ended by a NUL; the last may be cut) at ETWAUDIT_EXEC_ARGS.
 * FORK: the record alone. */
struct etwaudit_process_record {
  struct etwaudit_record_header header;
  __u64 start_time; /* the process's start, boot clock ns (task_struct.start_boottime) */
  __u32 parent_tgid;
  __u32 uid; /* real uid */
  __u32 path_size;
  __u32 args_size;
};

/* Where the paths of a record lie: the first right after the larger record
 * (a file record), the second (a rename's new name, an exec's arguments) a
 * path area further. */
#define ETWAUDIT_RECORD_PATH sizeof(struct etwaudit_file_record)
#define ETWAUDIT_RECORD_SECOND (ETWAUDIT_RECORD_PATH + ETWAUDIT_PATH_AREA)
#define ETWAUDIT_RENAME_SIZE (ETWAUDIT_RECORD_SECOND + ETWAUDIT_PATH_AREA)
#define ETWAUDIT_EXEC_PATH ETWAUDIT_RECORD_PATH
#define ETWAUDIT_EXEC_ARGS ETWAUDIT_RECORD_SECOND
#define ETWAUDIT_EXEC_SIZE (ETWAUDIT_EXEC_ARGS + ETWAUDIT_ARGS_MAX)

#endif
