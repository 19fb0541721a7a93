#include <catch2/catch.hpp>

#include "sources/live/linux_proc.h"

using namespace etwaudit::linux_proc;

TEST_CASE("mountinfo lines give device, mount point with escapes decoded, and type", "[fanotify]") {
  const auto mounts = parse_mountinfo(
      "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
      "40 27 254:0 /srv /mnt/my\\040data rw shared:7 master:2 - ext4 /dev/vda rw\n"
      "41 27 0:40 / /home rw - btrfs /dev/sdb1 rw\n"
      "42 27 0:41 / /net rw - nfs4 server:/export rw\n"
      "43 27 0:42 / /tmp rw - tmpfs tmpfs rw\n"
      "44 27 0:43 / /media/usb rw - fuseblk /dev/sdc1 rw\n"
      "45 27 0:44 / /remote rw - fuse.sshfs host: rw\n"
      "not a mountinfo line\n");
  REQUIRE(mounts.size() == 8);
  CHECK(mounts[2].device == "254:0");
  CHECK(mounts[2].mount_point == "/mnt/my data");
  CHECK(mounts[2].fs_type == "ext4");

  const auto nodev = nodev_filesystems(
      "nodev\tsysfs\nnodev\tproc\nnodev\ttmpfs\n\text4\nnodev\tnfs4\n\tbtrfs\n"
      "nodev\tfuse\n\tfuseblk\n");
  CHECK(nodev == std::set<std::string>{"sysfs", "proc", "tmpfs", "nfs4", "fuse"});

  // Local block filesystems, each once (the bind mount of / is the same filesystem).
  std::vector<std::string> picked;
  for (const auto& mount : default_watch_mounts(mounts, nodev)) picked.push_back(mount.mount_point);
  CHECK(picked == std::vector<std::string>{"/", "/home", "/media/usb"});
}

TEST_CASE("the start time comes from field 22 of /proc/PID/stat, whatever the command name holds", "[fanotify]") {
  const char* stat =
      "4242 (my) odd (name)) S 1 4242 4242 0 -1 4194560 97 0 0 0 1 0 0 0 20 0 1 0 123456 8192 100 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
  CHECK(stat_start_ticks(stat) == 123456u);
  CHECK_FALSE(stat_start_ticks("4242 (cut short) S 1 2"));
  CHECK_FALSE(stat_start_ticks(""));
  CHECK(boot_time_seconds("cpu  1 2 3\nbtime 1796200000\nprocesses 5\n") == 1796200000);
  CHECK_FALSE(boot_time_seconds("cpu 1 2 3\n"));
}

TEST_CASE("the parent pid is field 4 of /proc/PID/stat, the user the real uid of its status", "[fanotify]") {
  CHECK(stat_parent_pid("4242 (my) odd (name)) S 1717 4242 4242 0 -1") == 1717u);
  CHECK_FALSE(stat_parent_pid("4242 (cut short)"));
  const std::string status =
      "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nPid:\t4242\nPPid:\t1717\n"
      "Uid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n";
  CHECK(status_real_uid(status) == 1000u);  // the real uid, not the effective one of a setuid program
  CHECK_FALSE(status_real_uid("Name:\tcat\n"));
}

TEST_CASE("the dynamic loader an exec opens is told from the program", "[fanotify]") {
  for (const char* loader : {"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1",
                             "/lib/ld-musl-x86_64.so.1", "/usr/lib/ld.so.1", "/lib64/ld64.so.2"})
    CHECK(is_dynamic_loader(loader));
  for (const char* program : {"/usr/bin/ld", "/usr/bin/ld.bfd", "/usr/bin/ldd", "/usr/bin/cat", "/opt/ld-tools/x"})
    CHECK_FALSE(is_dynamic_loader(program));
}

TEST_CASE("command lines and deleted paths read as people expect", "[fanotify]") {
  CHECK(command_line(std::string("cp\0-a\0my file\0/tmp\0", 20)) == "cp -a my file /tmp");
  CHECK(command_line("") == "");
  CHECK(without_deleted_suffix("/tmp/x (deleted)", true) == "/tmp/x");
  // A live file may really be called that.
  CHECK(without_deleted_suffix("/tmp/x (deleted)", false) == "/tmp/x (deleted)");
  CHECK(without_deleted_suffix(" (deleted)", true) == " (deleted)");
}
