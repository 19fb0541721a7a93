// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* etwaudit's eBPF program: file I/O with its bytes and offsets, and the
 * identity of every process, into one ring buffer (records.h), read by
 * sources/live/ebpf_source.cpp.
 *
 * BTF raw tracepoints only (tp_btf: no tracefs, no kprobes, no fentry):
 *   sys_enter/sys_exit  the file syscalls, told apart by number (x86-64):
 *                       at entry the descriptor's file is looked up and kept
 *                       if it is a regular file on a real filesystem; at
 *                       exit the record goes out with the bytes the call
 *                       returned and where the transfer began (both files
 *                       of copy_file_range, sendfile and splice), an open
 *                       with the path and whether it created the file, an
 *                       unlink or a rename that succeeded with the names
 *                       (the directory's path walked, the name as given);
 *   sched_process_exec  the program (its path walked from the opened file)
 *                       and its arguments, before any of the new program's
 *                       I/O: one ring buffer keeps the order of reservation;
 *   sched_process_fork  a new process (threads are not);
 *   sched_process_exit  a process whose last thread ended.
 * The collector's own process is left out here, and so are the operations
 * --ops did not pick (opens and renames always go out: they name files) and
 * the reads, writes and closes of files the path filters left out (the
 * collector's verdicts, records.h). A record that does not fit
 * in the ring buffer is counted per CPU in `lost`. */
#include "vmlinux.h"
// (the kernel's types first: libbpf's headers use them)
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "records.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 own_tgid = 0;
const volatile bool filter_devices = false; /* record only the filesystems in `devices` (--mount) */
const volatile bool filter_files = false;   /* path filters: number the opens, look up `verdicts` */
const volatile __u32 skip_records = 0;      /* 1 << a record type --ops did not pick (READ, WRITE, CLOSE, DELETE) */
/* The path filters' prefixes the program compares at an open (records.h):
 * include_prefixes of --include-path's, then exclude_prefixes of
 * --exclude-path's; in 8-byte words, each its length in prefix_lengths. */
#define PREFIX_WORDS (ETWAUDIT_PREFIX_MAX / 8)
const volatile __u32 include_prefixes = 0;
const volatile __u32 exclude_prefixes = 0;
const volatile __u32 prefix_lengths[2 * ETWAUDIT_PREFIXES] = {};
const volatile __u64 prefix_words[2 * ETWAUDIT_PREFIXES][PREFIX_WORDS] = {};

/* x86-64 syscall numbers */
#define NR_read 0
#define NR_write 1
#define NR_open 2
#define NR_close 3
#define NR_pread64 17
#define NR_pwrite64 18
#define NR_readv 19
#define NR_writev 20
#define NR_creat 85
#define NR_openat 257
#define NR_preadv 295
#define NR_pwritev 296
#define NR_preadv2 327
#define NR_pwritev2 328
#define NR_openat2 437
#define NR_sendfile 40
#define NR_rename 82
#define NR_unlink 87
#define NR_splice 275
#define NR_unlinkat 263
#define NR_renameat 264
#define NR_renameat2 316
#define NR_copy_file_range 326

#define AT_FDCWD -100
#define AT_REMOVEDIR 0x200
#define FMODE_CREATED 0x100000

#define S_IFMT 00170000
#define S_IFREG 0100000
#define O_WRONLY 01
#define O_CREAT 0100
#define O_TRUNC 01000

#define NAME_AREA ETWAUDIT_NAME_AREA
#define PATH_AREA ETWAUDIT_PATH_AREA
#define NAME_SLACK (ETWAUDIT_PATH_AREA - ETWAUDIT_PATH_MAX) /* a name as given, after its directory's path */

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 16 << 20);
} records SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} lost SEC(".maps");

/* The filesystems to record (their superblocks' s_dev), when filter_devices. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __type(key, __u32);
  __type(value, __u8);
} devices SEC(".maps");

/* The path filters' verdicts, made by the collector, and the number of each
 * file's last open (records.h). LRU: a verdict or a number pushed out only
 * means the file's records go to the collector, which judges them itself. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct etwaudit_file_key);
  __type(value, struct etwaudit_verdict);
} verdicts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct etwaudit_file_key);
  __type(value, __u64);
} last_opens SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} opens SEC(".maps");

/* One descriptor of a call (a copy's: the one read, then the one written). */
struct side {
  struct file* file; /* the descriptor's file at entry; NULL: not a file recorded */
  __s64 fd;
  __s64 offset; /* the p* calls: their offset argument; else -1 (the file's position) */
  __u64 dev, ino;
};

/* A file syscall between its entry and its exit, per thread. */
struct call {
  struct side sides[2];
  const char* names[2]; /* unlink, rename: the names as given, and the directories they are in */
  __s64 dirs[2];
  __u32 nr;
  __u32 flags; /* opens: the flags */
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, __u64);
  __type(value, struct call);
} calls SEC(".maps");

/* Where a record with a path is put together (one per CPU). */
struct scratch {
  union {
    struct etwaudit_file_record file;
    struct etwaudit_process_record process;
  };
  char paths[2][PATH_AREA];                        /* at ETWAUDIT_RECORD_PATH and _SECOND (an exec's arguments there) */
  const unsigned char* names[ETWAUDIT_PATH_DEPTH]; /* the path's components, the file's first */
  /* Kept here rather than in the loops' context: the verifier does not
   * follow map memory, so every round of a loop looks the same to it and
   * it need not walk each round on its own. */
  __u32 depth;  /* components in names */
  __u32 length; /* bytes of the path put together so far */
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct scratch);
} scratches SEC(".maps");

static __always_inline void count_lost(void) {
  __u32 zero = 0;
  __u64* count = bpf_map_lookup_elem(&lost, &zero);
  if (count) *count += 1;
}

/* Whether a record just written wakes the collector: only once a batch is
 * waiting (a wake-up per record costs the traced program microseconds);
 * the collector also reads what is there every 50 ms. */
#define WAKE_BYTES (256 << 10)
static __always_inline __u64 wakeup(void) {
  return bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= WAKE_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* Room for a record of size in the ring buffer; NULL (counted as lost) when full. */
static __always_inline void* reserve(__u64 size) {
  void* record = bpf_ringbuf_reserve(&records, size, 0);
  if (!record) count_lost();
  return record;
}

static __always_inline void fill_header(struct etwaudit_record_header* header, __u32 type, __u32 size) {
  __u64 id = bpf_get_current_pid_tgid();
  header->type = type;
  header->tgid = id >> 32;
  header->tid = (__u32)id;
  header->size = size;
  header->time = bpf_ktime_get_boot_ns();
}

/* The file behind a descriptor of the current process, or NULL. */
static __always_inline struct file* file_of(__s64 fd) {
  struct task_struct* task = (struct task_struct*)bpf_get_current_task();
  struct fdtable* table = BPF_CORE_READ(task, files, fdt);
  if (!table || fd < 0 || fd >= BPF_CORE_READ(table, max_fds)) return NULL;
  struct file** files = BPF_CORE_READ(table, fd);
  struct file* file = NULL;
  bpf_probe_read_kernel(&file, sizeof file, &files[fd]);
  return file;
}

/* A filesystem that holds no files of a user's (/proc, /sys, ...). */
static __always_inline bool pseudo(unsigned long magic) {
  switch (magic) {
    case 0x9fa0:     /* proc */
    case 0x62656572: /* sysfs */
    case 0x27e0eb:   /* cgroup */
    case 0x63677270: /* cgroup2 */
    case 0x64626720: /* debugfs */
    case 0x74726163: /* tracefs */
    case 0x73636673: /* securityfs */
    case 0xcafe4a11: /* bpf */
    case 0xf97cff8c: /* selinuxfs */
    case 0x6165676c: /* pstore */
    case 0xde5e81e4: /* efivarfs */
    case 0x62656570: /* configfs */ return true;
  }
  return false;
}

/* A filesystem to record: one that holds files, and one of --mount's. */
static __always_inline bool watched(struct super_block* sb) {
  if (pseudo(BPF_CORE_READ(sb, s_magic))) return false;
  if (!filter_devices) return true;
  __u32 dev = BPF_CORE_READ(sb, s_dev);
  return bpf_map_lookup_elem(&devices, &dev) != NULL;
}

/* A regular file on a filesystem to record. */
static __always_inline bool wanted(struct file* file) {
  if (!file) return false;
  struct inode* inode = BPF_CORE_READ(file, f_inode);
  if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFREG) return false;
  return watched(BPF_CORE_READ(inode, i_sb));
}

/* Whether the collector left the file out by its path, judged from its
 * last open (or, opened before the collector, from /proc). */
static __always_inline bool left_out(__u64 dev, __u64 ino) {
  if (!filter_files) return false;
  struct etwaudit_file_key key = {.dev = dev, .ino = ino};
  struct etwaudit_verdict* verdict = bpf_map_lookup_elem(&verdicts, &key);
  if (!verdict || !verdict->left_out) return false;
  __u64* last = bpf_map_lookup_elem(&last_opens, &key);
  return verdict->open_seq == (last ? *last : 0);
}

/* Comparing the path in scratch->paths[0] with prefixes first .. first + count - 1. */
struct comparison {
  __u32 first;
  __u32 length; /* of the path, its NUL not included */
  bool found;
};

static long compare_prefix(__u32 i, struct comparison* at) {
  __u32 zero = 0;
  struct scratch* scratch = bpf_map_lookup_elem(&scratches, &zero);
  if (!scratch) return 1;
  __u32 p = (at->first + i) & (2 * ETWAUDIT_PREFIXES - 1);
  __u32 length = prefix_lengths[p];
  if (length > at->length || length > ETWAUDIT_PREFIX_MAX) return 0;
  const __u64* path = (const __u64*)scratch->paths[0];
  for (__u32 w = 0; w < PREFIX_WORDS; w++) {
    __u32 done = w * 8;
    if (done >= length) break;
    __u32 rest = length - done;
    __u64 mask = rest >= 8 ? ~0ULL : (1ULL << (rest * 8)) - 1; /* the first bytes: little-endian */
    if ((path[w] ^ prefix_words[p][w]) & mask) return 0;
  }
  at->found = true;
  return 1;
}

/* Whether the path filters leave out the file whose path (length bytes) is
 * in scratch->paths[0], by the prefixes the program was given. */
static __always_inline bool left_out_by_name(__u32 length) {
  struct comparison at = {.first = 0, .length = length, .found = false};
  if (include_prefixes) {
    bpf_loop(include_prefixes, compare_prefix, &at, 0);
    if (!at.found) return true;
  }
  if (exclude_prefixes) {
    at.first = ETWAUDIT_PREFIXES;
    at.found = false;
    bpf_loop(exclude_prefixes, compare_prefix, &at, 0);
    if (at.found) return true;
  }
  return false;
}

/* Walking a path up, from its file to the root, across mounts. */
struct walk {
  struct dentry* dentry;
  struct mount* mount;
};

/* Where a path is put together: scratch->paths[area]. */
struct assemble {
  __u32 area;
};

static long walk_up(__u32 i, struct walk* walk) {
  __u32 zero = 0;
  struct scratch* scratch = bpf_map_lookup_elem(&scratches, &zero);
  if (!scratch) return 1;
  struct dentry* dentry = walk->dentry;
  struct mount* mount = walk->mount;
  if (dentry == BPF_CORE_READ(mount, mnt.mnt_root)) {
    struct mount* parent = BPF_CORE_READ(mount, mnt_parent);
    if (parent == mount) return 1; /* the root of all */
    walk->dentry = BPF_CORE_READ(mount, mnt_mountpoint);
    walk->mount = parent;
    return 0;
  }
  struct dentry* parent = BPF_CORE_READ(dentry, d_parent);
  if (parent == dentry) return 1;
  __u32 depth = scratch->depth;
  if (depth >= ETWAUDIT_PATH_DEPTH) return 1;
  depth &= ETWAUDIT_PATH_DEPTH - 1;
  barrier_var(depth);
  scratch->names[depth] = BPF_CORE_READ(dentry, d_name.name);
  scratch->depth = depth + 1;
  walk->dentry = parent;
  return 0;
}

static long put_component(__u32 i, struct assemble* at) {
  __u32 zero = 0;
  struct scratch* scratch = bpf_map_lookup_elem(&scratches, &zero);
  if (!scratch || i >= scratch->depth) return 1;
  __u32 k = (scratch->depth - 1 - i) & (ETWAUDIT_PATH_DEPTH - 1);
  barrier_var(k); /* the verifier is to see the mask on the register used */
  const unsigned char* name = scratch->names[k];
  __u32 length = scratch->length;
  if (length >= ETWAUDIT_PATH_MAX - NAME_AREA) return 1; /* cut: no room for another */
  char* path = scratch->paths[at->area & 1];
  path[length & (ETWAUDIT_PATH_MAX - 1)] = '/';
  length += 1;
  long copied = bpf_probe_read_kernel_str(&path[length & (ETWAUDIT_PATH_MAX - 1)], NAME_AREA, name);
  if (copied > 1) length += copied - 1;
  scratch->length = length;
  return 0;
}

/* The absolute path of where (a dentry on a mount) into
 * scratch->paths[area], without its NUL; its length. "" for the root. */
static __always_inline __u32 walk_path(struct scratch* scratch, __u32 area, struct path* where) {
  struct walk walk = {
      .dentry = BPF_CORE_READ(where, dentry),
      .mount = (struct mount*)((void*)BPF_CORE_READ(where, mnt) - bpf_core_field_offset(struct mount, mnt)),
  };
  scratch->depth = 0;
  bpf_loop(ETWAUDIT_PATH_DEPTH + 16, walk_up, &walk, 0);
  struct assemble at = {.area = area};
  scratch->length = 0;
  bpf_loop(ETWAUDIT_PATH_DEPTH, put_component, &at, 0);
  return scratch->length;
}

/* Ends the path of length bytes in scratch->paths[area]: "/" for the root;
 * its size, NUL included. */
static __always_inline __u32 end_path(struct scratch* scratch, __u32 area, __u32 length) {
  char* path = scratch->paths[area & 1];
  if (length == 0) path[length++] = '/';
  path[length & (ETWAUDIT_PATH_MAX - 1)] = '\0';
  return (length & (ETWAUDIT_PATH_MAX - 1)) + 1;
}

/* The absolute path of file into scratch->paths[0]; its size, NUL included. */
static __always_inline __u32 path_of(struct scratch* scratch, struct file* file) {
  struct path where;
  bpf_probe_read_kernel(&where, sizeof where, __builtin_preserve_access_index(&file->f_path));
  return end_path(scratch, 0, walk_path(scratch, 0, &where));
}

/* The path a system call names by a directory descriptor (AT_FDCWD: the
 * working directory) and a name as given, into scratch->paths[area]; its
 * size, NUL included, or 0 when the directory is not a real filesystem's.
 * The name is taken as it is ("..", symbolic links not resolved). */
static __always_inline __u32 path_at(struct scratch* scratch, __u32 area, __s64 dir, const char* name) {
  char* path = scratch->paths[area & 1];
  char first = 0;
  bpf_probe_read_user(&first, 1, name);
  if (first == '/') {
    long copied = bpf_probe_read_user_str(path, ETWAUDIT_PATH_MAX, name);
    return copied > 0 ? copied : 0;
  }
  struct path where;
  if (dir == AT_FDCWD) {
    struct task_struct* task = (struct task_struct*)bpf_get_current_task();
    struct fs_struct* fs = BPF_CORE_READ(task, fs);
    bpf_probe_read_kernel(&where, sizeof where, __builtin_preserve_access_index(&fs->pwd));
  } else {
    struct file* file = file_of(dir);
    if (!file) return 0;
    bpf_probe_read_kernel(&where, sizeof where, __builtin_preserve_access_index(&file->f_path));
  }
  if (!watched(BPF_CORE_READ(where.dentry, d_sb))) return 0;
  __u32 length = walk_path(scratch, area, &where) & (ETWAUDIT_PATH_MAX - 1);
  path[length] = '/';
  length = (length + 1) & (ETWAUDIT_PATH_MAX - 1);
  long copied = bpf_probe_read_user_str(&path[length], NAME_SLACK, name);
  return copied > 0 ? length + copied : 0;
}

static __always_inline __u64 arg(struct pt_regs* regs, int n) {
  switch (n) {
    case 1: return BPF_CORE_READ(regs, di);
    case 2: return BPF_CORE_READ(regs, si);
    case 3: return BPF_CORE_READ(regs, dx);
    default: return BPF_CORE_READ(regs, r10);
  }
}

static __always_inline bool own(void) {
  return (bpf_get_current_pid_tgid() >> 32) == own_tgid;
}

/* A READ, WRITE or CLOSE record of one side of a call. */
static __always_inline int submit_file_record(__u32 type, const struct side* side, __s64 offset, __s64 result) {
  struct etwaudit_file_record* record = reserve(sizeof *record);
  if (!record) return 0;
  fill_header(&record->header, type, sizeof *record);
  record->fd = side->fd;
  record->offset = offset;
  record->result = result;
  record->dev = side->dev;
  record->ino = side->ino;
  record->path_size = 0;
  record->flags = 0;
  record->created = 0;
  record->path2_size = 0;
  record->open_seq = 0;
  bpf_ringbuf_submit(record, wakeup());
  return 0;
}

/* side for descriptor fd: true when it is a file to record. */
static __always_inline bool look_up(struct side* side, __s64 fd, __s64 offset) {
  side->fd = fd;
  side->offset = offset;
  struct file* file = file_of(fd);
  if (!wanted(file)) return false;
  side->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
  side->ino = BPF_CORE_READ(file, f_inode, i_ino);
  if (left_out(side->dev, side->ino)) return false;
  side->file = file;
  return true;
}

static __always_inline bool skipped(__u32 type) {
  return (skip_records & (1u << type)) != 0;
}

/* An offset a copy takes by address (NULL: the file's position). */
static __always_inline __s64 offset_at(__u64 address) {
  __s64 offset = -1;
  if (address) bpf_probe_read_user(&offset, sizeof offset, (void*)address);
  return offset;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs* regs, long nr) {
  struct call call = {.nr = nr, .sides = {{.offset = -1}, {.offset = -1}}};
  bool any = false;
  switch (nr) {
    case NR_open: call.flags = arg(regs, 2); break;
    case NR_openat: call.flags = arg(regs, 3); break;
    case NR_creat: call.flags = O_CREAT | O_WRONLY | O_TRUNC; break;
    case NR_openat2: {
      struct open_how how = {};
      bpf_probe_read_user(&how, sizeof how, (void*)arg(regs, 3));
      call.flags = how.flags;
      break;
    }
    case NR_pread64:
    case NR_pwrite64:
    case NR_preadv:
    case NR_pwritev:
    case NR_preadv2:
    case NR_pwritev2: {
      if (skipped(nr == NR_pread64 || nr == NR_preadv || nr == NR_preadv2 ? ETWAUDIT_RECORD_READ
                                                                         : ETWAUDIT_RECORD_WRITE))
        return 0;
      __s64 offset = arg(regs, 4);
      if (!look_up(&call.sides[0], (int)arg(regs, 1), offset < 0 ? -1 : offset))
        return 0; /* -1: preadv2's "the position" */
      break;
    }
    case NR_read:
    case NR_readv:
      if (skipped(ETWAUDIT_RECORD_READ)) return 0;
      if (!look_up(&call.sides[0], (int)arg(regs, 1), -1)) return 0;
      break;
    case NR_write:
    case NR_writev:
      if (skipped(ETWAUDIT_RECORD_WRITE)) return 0;
      if (!look_up(&call.sides[0], (int)arg(regs, 1), -1)) return 0;
      break;
    case NR_close:
      if (skipped(ETWAUDIT_RECORD_CLOSE)) return 0;
      if (!look_up(&call.sides[0], (int)arg(regs, 1), -1)) return 0;
      break;
    case NR_copy_file_range: /* (fd_in, off_in*, fd_out, off_out*, len, flags) */
    case NR_splice:
      if (!skipped(ETWAUDIT_RECORD_READ)) any |= look_up(&call.sides[0], (int)arg(regs, 1), offset_at(arg(regs, 2)));
      if (!skipped(ETWAUDIT_RECORD_WRITE)) any |= look_up(&call.sides[1], (int)arg(regs, 3), offset_at(arg(regs, 4)));
      if (!any) return 0;
      break;
    case NR_sendfile: /* (out_fd, in_fd, offset*, count) */
      if (!skipped(ETWAUDIT_RECORD_READ)) any |= look_up(&call.sides[0], (int)arg(regs, 2), offset_at(arg(regs, 3)));
      if (!skipped(ETWAUDIT_RECORD_WRITE)) any |= look_up(&call.sides[1], (int)arg(regs, 1), -1);
      if (!any) return 0;
      break;
    case NR_unlink:
      if (skipped(ETWAUDIT_RECORD_DELETE)) return 0;
      call.dirs[0] = AT_FDCWD;
      call.names[0] = (const char*)arg(regs, 1);
      break;
    case NR_unlinkat:
      if (skipped(ETWAUDIT_RECORD_DELETE) || (arg(regs, 3) & AT_REMOVEDIR)) return 0; /* (a directory) */
      call.dirs[0] = (int)arg(regs, 1);
      call.names[0] = (const char*)arg(regs, 2);
      break;
    case NR_rename:
      call.dirs[0] = call.dirs[1] = AT_FDCWD;
      call.names[0] = (const char*)arg(regs, 1);
      call.names[1] = (const char*)arg(regs, 2);
      break;
    case NR_renameat:
    case NR_renameat2:
      call.dirs[0] = (int)arg(regs, 1);
      call.names[0] = (const char*)arg(regs, 2);
      call.dirs[1] = (int)arg(regs, 3);
      call.names[1] = (const char*)arg(regs, 4);
      break;
    default: return 0;
  }
  if (own()) return 0;
  if (nr == NR_close) return submit_file_record(ETWAUDIT_RECORD_CLOSE, &call.sides[0], -1, 0);
  __u64 id = bpf_get_current_pid_tgid();
  bpf_map_update_elem(&calls, &id, &call, BPF_ANY);
  return 0;
}

static __always_inline int opened(struct call* call, long fd) {
  struct file* file = file_of(fd);
  if (!wanted(file)) return 0;
  __u32 zero = 0;
  struct scratch* scratch = bpf_map_lookup_elem(&scratches, &zero);
  if (!scratch) return 0;
  __u32 path_size = path_of(scratch, file);
  struct etwaudit_file_record* record = &scratch->file;
  __u64 size = sizeof *record + path_size;
  fill_header(&record->header, ETWAUDIT_RECORD_OPEN, size);
  record->fd = fd;
  record->offset = -1;
  record->result = 0;
  record->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
  record->ino = BPF_CORE_READ(file, f_inode, i_ino);
  record->path_size = path_size;
  record->flags = call->flags;
  record->created = (BPF_CORE_READ(file, f_mode) & FMODE_CREATED) != 0;
  record->path2_size = 0;
  record->open_seq = 0;
  if (filter_files) { /* this open's number: the collector's verdict on the file holds for it */
    __u64* count = bpf_map_lookup_elem(&opens, &zero);
    if (count) {
      record->open_seq = __sync_fetch_and_add(count, 1) + 1;
      struct etwaudit_file_key key = {.dev = record->dev, .ino = record->ino};
      bpf_map_update_elem(&last_opens, &key, &record->open_seq, BPF_ANY);
      if (left_out_by_name(path_size - 1)) {
        struct etwaudit_verdict verdict = {.open_seq = record->open_seq, .left_out = 1};
        bpf_map_update_elem(&verdicts, &key, &verdict, BPF_ANY);
      }
    }
  }
  /* the record and its path lie one after the other in scratch */
  const __u64 flags = wakeup();
  barrier_var(size);
  if (size > sizeof(struct etwaudit_file_record) + ETWAUDIT_PATH_MAX) return 0;
  if (bpf_ringbuf_output(&records, scratch, size, flags)) count_lost();
  return 0;
}

/* An unlink or a rename that took place: its names. */
static __always_inline int named(struct call* call) {
  __u32 zero = 0;
  struct scratch* scratch = bpf_map_lookup_elem(&scratches, &zero);
  if (!scratch) return 0;
  struct etwaudit_file_record* record = &scratch->file;
  const bool rename = call->nr != NR_unlink && call->nr != NR_unlinkat;
  record->path_size = path_at(scratch, 0, call->dirs[0], call->names[0]);
  record->path2_size = rename ? path_at(scratch, 1, call->dirs[1], call->names[1]) : 0;
  if (record->path_size == 0 || record->path_size > ETWAUDIT_PATH_AREA || (rename && record->path2_size == 0)) return 0;
  __u64 size = rename ? ETWAUDIT_RENAME_SIZE : sizeof *record + record->path_size;
  fill_header(&record->header, rename ? ETWAUDIT_RECORD_RENAME : ETWAUDIT_RECORD_DELETE, size);
  record->fd = -1;
  record->offset = -1;
  record->result = 0;
  record->dev = record->ino = 0;
  record->flags = record->created = 0;
  record->open_seq = 0;
  /* With path filters, a rename is read at once: a file it moves out of the
   * names left out has its verdict lifted before more of its I/O comes. */
  const __u64 flags = rename && filter_files ? BPF_RB_FORCE_WAKEUP : wakeup();
  if (rename) {
    if (bpf_ringbuf_output(&records, scratch, ETWAUDIT_RENAME_SIZE, flags)) count_lost();
    return 0;
  }
  barrier_var(size); /* the verifier is to see the bound on the register used */
  if (size > ETWAUDIT_RENAME_SIZE) return 0;
  if (bpf_ringbuf_output(&records, scratch, size, flags)) count_lost();
  return 0;
}

/* A transfer's record for one side: where it began (the call said, else the
 * file's position after it less the bytes, right for O_APPEND too). */
static __always_inline int transferred(__u32 type, struct side* side, long ret) {
  if (!side->file) return 0;
  struct file* file = side->file;
  const __s64 offset = side->offset >= 0 ? side->offset : ret >= 0 ? BPF_CORE_READ(file, f_pos) - ret : -1;
  return submit_file_record(type, side, offset, ret);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs* regs, long ret) {
  /* Every system call of every process ends here: the others leave at once. */
  switch (BPF_CORE_READ(regs, orig_ax)) {
    case NR_read:
    case NR_write:
    case NR_open:
    case NR_pread64:
    case NR_pwrite64:
    case NR_readv:
    case NR_writev:
    case NR_sendfile:
    case NR_rename:
    case NR_unlink:
    case NR_creat:
    case NR_openat:
    case NR_unlinkat:
    case NR_renameat:
    case NR_splice:
    case NR_preadv:
    case NR_pwritev:
    case NR_renameat2:
    case NR_copy_file_range:
    case NR_preadv2:
    case NR_pwritev2:
    case NR_openat2: break;
    default: return 0;
  }
  __u64 id = bpf_get_current_pid_tgid();
  struct call* found = bpf_map_lookup_elem(&calls, &id);
  if (!found) return 0;
  struct call call = *found;
  bpf_map_delete_elem(&calls, &id);
  switch (call.nr) {
    case NR_open:
    case NR_openat:
    case NR_openat2:
    case NR_creat: return ret >= 0 ? opened(&call, ret) : 0;
    case NR_unlink:
    case NR_unlinkat:
    case NR_rename:
    case NR_renameat:
    case NR_renameat2: return ret == 0 ? named(&call) : 0;
    case NR_copy_file_range:
    case NR_splice:
    case NR_sendfile:
      transferred(ETWAUDIT_RECORD_READ, &call.sides[0], ret);
      return transferred(ETWAUDIT_RECORD_WRITE, &call.sides[1], ret);
    case NR_read:
    case NR_pread64:
    case NR_readv:
    case NR_preadv:
    case NR_preadv2: return transferred(ETWAUDIT_RECORD_READ, &call.sides[0], ret);
    default: return transferred(ETWAUDIT_RECORD_WRITE, &call.sides[0], ret);
  }
}

static __always_inline __u64 start_of(struct task_struct* task) {
  return BPF_CORE_READ(task, group_leader, start_boottime);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(process_exec, struct task_struct* task, pid_t old_pid, struct linux_binprm* bprm) {
  if (own()) return 0;
  __u32 zero = 0;
  struct scratch* scratch = bpf_map_lookup_elem(&scratches, &zero);
  if (!scratch) return 0;
  struct etwaudit_process_record* record = &scratch->process;
  record->path_size = path_of(scratch, BPF_CORE_READ(bprm, file));
  __u64 arg_start = BPF_CORE_READ(task, mm, arg_start);
  __u64 arg_end = BPF_CORE_READ(task, mm, arg_end);
  __u64 args_size = arg_end > arg_start ? arg_end - arg_start : 0;
  if (args_size > ETWAUDIT_ARGS_MAX) args_size = ETWAUDIT_ARGS_MAX;
  barrier_var(args_size);
  if (args_size > ETWAUDIT_ARGS_MAX || bpf_probe_read_user(scratch->paths[1], args_size, (void*)arg_start))
    args_size = 0;
  record->args_size = args_size;
  record->start_time = start_of(task);
  record->parent_tgid = BPF_CORE_READ(task, real_parent, tgid);
  record->uid = BPF_CORE_READ(task, real_cred, uid.val);
  fill_header(&record->header, ETWAUDIT_RECORD_EXEC, ETWAUDIT_EXEC_SIZE);
  if (bpf_ringbuf_output(&records, scratch, ETWAUDIT_EXEC_SIZE, wakeup())) count_lost();
  return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(process_fork, struct task_struct* parent, struct task_struct* child) {
  if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid)) return 0; /* a thread */
  if (BPF_CORE_READ(parent, tgid) == own_tgid) return 0;
  struct etwaudit_process_record* record = reserve(sizeof *record);
  if (!record) return 0;
  fill_header(&record->header, ETWAUDIT_RECORD_FORK, sizeof *record);
  record->header.tgid = BPF_CORE_READ(child, tgid);
  record->header.tid = record->header.tgid;
  record->start_time = BPF_CORE_READ(child, start_boottime);
  record->parent_tgid = BPF_CORE_READ(parent, tgid);
  record->uid = BPF_CORE_READ(child, real_cred, uid.val);
  record->path_size = 0;
  record->args_size = 0;
  bpf_ringbuf_submit(record, wakeup());
  return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(process_exit, struct task_struct* task) {
  if (own()) return 0;
  if (BPF_CORE_READ(task, signal, live.counter) != 0) return 0; /* other threads go on */
  struct etwaudit_record_header* record = reserve(sizeof *record);
  if (!record) return 0;
  fill_header(record, ETWAUDIT_RECORD_EXIT, sizeof *record);
  bpf_ringbuf_submit(record, wakeup());
  return 0;
}

_Static_assert(__builtin_offsetof(struct scratch, paths[0]) == ETWAUDIT_RECORD_PATH,
               "a path follows the larger record");
_Static_assert(__builtin_offsetof(struct scratch, paths[1]) == ETWAUDIT_RECORD_SECOND, "and the second path the first");
_Static_assert(ETWAUDIT_RECORD_PATH % 8 == 0, "a path is compared with the prefixes a word at a time");
