/* Preloaded in the roots of simulated hosts of another OS (tests/sim/oshosts.py, through
 * /etc/ld.so.preload): uname(2) reports the kernel release the host simulates, which its
 * /proc/sys/kernel/osrelease (a bind mount) holds, so that `uname -r`, Python's os.uname() and
 * everything reading /proc agree. The hosts share the controller's kernel; without this each
 * would report that kernel's release, for which no OS has a devel package.
 * A host of another architecture (`up --arch`) also reports its machine, which MACHINE_FILE
 * in its root names: `uname -m`, Python's platform.machine(), Ansible's ansible_architecture,
 * rpm's %_arch and dnf's basearch all come from uname(2). Its CPU and binaries stay the
 * controller's. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef MACHINE_FILE
#define MACHINE_FILE "/var/lib/ascend-sim/machine"
#endif

/* The first line of `path` into `field` (a utsname field), if the file holds one. */
static void first_line(const char *path, char *field, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char text[sizeof ((struct utsname *)0)->release];
    ssize_t n = read(fd, text, sizeof text - 1 < size ? sizeof text - 1 : size - 1);
    close(fd);
    if (n <= 0)
        return;
    text[n] = '\0';
    text[strcspn(text, "\n")] = '\0';
    if (text[0] != '\0')
        memcpy(field, text, strlen(text) + 1);
}

int uname(struct utsname *buf)
{
    long rc = syscall(SYS_uname, buf);
    if (rc != 0)
        return (int)rc;
    first_line("/proc/sys/kernel/osrelease", buf->release, sizeof buf->release);
    first_line(MACHINE_FILE, buf->machine, sizeof buf->machine);
    return 0;
}
