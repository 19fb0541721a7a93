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
 *                       returned and where the transfer began;
 *   sched_process_exec  the program (its path walked from the opened file)
 *                       and its arguments, before any of the new program's
 *                       I/O: one ring buffer keeps the order of reservation;
 *   sched_process_fork  a new process (threads are not);
 *   sched_process_exit  a process whose last thread ended.
 * The collector's own process is left out here. A record that does not fit
 * in the ring buffer is counted per CPU in `lost`. */
#include "vmlinux.h"
// (the kernel's types first: libbpf's headers use them)
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "records.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 own_tgid = 0;

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

#define S_IFMT 00170000
#define S_IFREG 0100000
#define O_WRONLY 01
#define O_CREAT 0100
#define O_TRUNC 01000

#define NAME_AREA ETWAUDIT_NAME_AREA
#define PATH_AREA ETWAUDIT_PATH_AREA

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

/* A file syscall between its entry and its exit, per thread. */
struct call {
  struct file* file; /* the descriptor's file at entry (read, write, close) */
  __s64 fd;
  __s64 offset; /* the p* calls: their offset argument; else -1 */
  __u64 dev, ino;
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
  char path[PATH_AREA]; /* at ETWAUDIT_EXEC_PATH: the file record is the larger */
  char args[ETWAUDIT_ARGS_MAX];
  const unsigned char* names[ETWAUDIT_PATH_DEPTH]; /* the path's components, the file's first */
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

/* A regular file on a filesystem that holds files (not /proc, /sys, ...). */
static __always_inline bool wanted(struct file* file) {
  if (!file) return false;
  struct inode* inode = BPF_CORE_READ(file, f_inode);
  if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFREG) return false;
  switch (BPF_CORE_READ(inode, i_sb, s_magic)) {
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
    case 0x62656570: /* configfs */ return false;
  }
  return true;
}

/* Walking a path up, from its file to the root, across mounts. */
struct walk {
  struct dentry* dentry;
  struct mount* mount;
  __u32 depth;
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
  __u32 depth = walk->depth;
  if (depth >= ETWAUDIT_PATH_DEPTH) return 1;
  depth &= ETWAUDIT_PATH_DEPTH - 1;
  barrier_var(depth);
  scratch->names[depth] = BPF_CORE_READ(dentry, d_name.name);
  walk->depth = depth + 1;
  walk->dentry = parent;
  return 0;
}

struct assemble {
  __u32 depth;
  __u32 length; /* bytes written to path */
};

static long put_component(__u32 i, struct assemble* at) {
  __u32 zero = 0;
  struct scratch* scratch = bpf_map_lookup_elem(&scratches, &zero);
  if (!scratch || i >= at->depth) return 1;
  __u32 k = (at->depth - 1 - i) & (ETWAUDIT_PATH_DEPTH - 1);
  barrier_var(k); /* the verifier is to see the mask on the register used */
  const unsigned char* name = scratch->names[k];
  __u32 length = at->length;
  if (length >= ETWAUDIT_PATH_MAX - NAME_AREA) return 1; /* cut: no room for another */
  scratch->path[length & (ETWAUDIT_PATH_MAX - 1)] = '/';
  length += 1;
  long copied = bpf_probe_read_kernel_str(&scratch->path[length & (ETWAUDIT_PATH_MAX - 1)], NAME_AREA, name);
  if (copied > 1) length += copied - 1;
  at->length = length;
  return 0;
}

/* The absolute path of file into scratch->path; its size, NUL included. */
static __always_inline __u32 path_of(struct scratch* scratch, struct file* file) {
  struct walk walk = {
      .dentry = BPF_CORE_READ(file, f_path.dentry),
      .mount = (struct mount*)((void*)BPF_CORE_READ(file, f_path.mnt) - bpf_core_field_offset(struct mount, mnt)),
      .depth = 0,
  };
  bpf_loop(ETWAUDIT_PATH_DEPTH + 16, walk_up, &walk, 0);
  struct assemble at = {.depth = walk.depth, .length = 0};
  bpf_loop(ETWAUDIT_PATH_DEPTH, put_component, &at, 0);
  __u32 length = at.length;
  if (length == 0) scratch->path[length++] = '/';
  scratch->path[length & (ETWAUDIT_PATH_MAX - 1)] = '\0';
  return (length & (ETWAUDIT_PATH_MAX - 1)) + 1;
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

/* A READ, WRITE or CLOSE record of call's file. */
static __always_inline int submit_file_record(__u32 type, const struct call* call, __s64 offset, __s64 result) {
  struct etwaudit_file_record* record = reserve(sizeof *record);
  if (!record) return 0;
  fill_header(&record->header, type, sizeof *record);
  record->fd = call->fd;
  record->offset = offset;
  record->result = result;
  record->dev = call->dev;
  record->ino = call->ino;
  record->path_size = 0;
  record->flags = 0;
  bpf_ringbuf_submit(record, 0);
  return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs* regs, long nr) {
  struct call call = {.offset = -1, .nr = nr};
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
    case NR_pwritev2:
      call.offset = arg(regs, 4);
      /* fall through */
    case NR_read:
    case NR_write:
    case NR_readv:
    case NR_writev:
    case NR_close: {
      call.fd = (int)arg(regs, 1);
      struct file* file = file_of(call.fd);
      if (!wanted(file)) return 0;
      call.file = file;
      call.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
      call.ino = BPF_CORE_READ(file, f_inode, i_ino);
      break;
    }
    default: return 0;
  }
  if (own()) return 0;
  if ((nr == NR_preadv2 || nr == NR_pwritev2) && call.offset == -1) call.offset = -2; /* the file's position */
  if (nr == NR_close) return submit_file_record(ETWAUDIT_RECORD_CLOSE, &call, -1, 0);
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
  __u32 size = sizeof *record + path_size;
  fill_header(&record->header, ETWAUDIT_RECORD_OPEN, size);
  record->fd = fd;
  record->offset = -1;
  record->result = 0;
  record->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
  record->ino = BPF_CORE_READ(file, f_inode, i_ino);
  record->path_size = path_size;
  record->flags = call->flags;
  /* the record and its path lie one after the other in scratch */
  if (size > sizeof(struct etwaudit_file_record) + ETWAUDIT_PATH_MAX) return 0;
  if (bpf_ringbuf_output(&records, scratch, size, 0)) count_lost();
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs* regs, long ret) {
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
  }
  bool read = call.nr == NR_read || call.nr == NR_pread64 || call.nr == NR_readv || call.nr == NR_preadv ||
              call.nr == NR_preadv2;
  /* Where the transfer began: the p* calls say; else the position after it
   * less the bytes (right for O_APPEND too). */
  struct file* file = call.file;
  const __s64 offset = call.offset >= 0 ? call.offset : ret >= 0 ? BPF_CORE_READ(file, f_pos) - ret : -1;
  return submit_file_record(read ? ETWAUDIT_RECORD_READ : ETWAUDIT_RECORD_WRITE, &call, offset, ret);
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
  if (args_size > ETWAUDIT_ARGS_MAX || bpf_probe_read_user(scratch->args, args_size, (void*)arg_start)) args_size = 0;
  record->args_size = args_size;
  record->start_time = start_of(task);
  record->parent_tgid = BPF_CORE_READ(task, real_parent, tgid);
  record->uid = BPF_CORE_READ(task, real_cred, uid.val);
  fill_header(&record->header, ETWAUDIT_RECORD_EXEC, ETWAUDIT_EXEC_SIZE);
  if (bpf_ringbuf_output(&records, scratch, ETWAUDIT_EXEC_SIZE, 0)) count_lost();
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
  bpf_ringbuf_submit(record, 0);
  return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(process_exit, struct task_struct* task) {
  if (own()) return 0;
  if (BPF_CORE_READ(task, signal, live.counter) != 0) return 0; /* other threads go on */
  struct etwaudit_record_header* record = reserve(sizeof *record);
  if (!record) return 0;
  fill_header(record, ETWAUDIT_RECORD_EXIT, sizeof *record);
  bpf_ringbuf_submit(record, 0);
  return 0;
}

_Static_assert(__builtin_offsetof(struct scratch, path) == ETWAUDIT_EXEC_PATH, "the path follows the larger record");
_Static_assert(__builtin_offsetof(struct scratch, args) == ETWAUDIT_EXEC_ARGS, "the arguments follow the path area");
