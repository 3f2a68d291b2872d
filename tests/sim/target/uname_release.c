/* Preloaded in the roots of simulated hosts of another OS (tests/sim/oshosts.py, through
 * /etc/ld.so.preload): uname(2) reports the kernel release the host simulates, which its
 * /proc/sys/kernel/osrelease (a bind mount) holds, so that `uname -r`, Python's os.uname() and
 * everything reading /proc agree. The hosts share the controller's kernel; without this each
 * would report that kernel's release, for which no OS has a devel package. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

int uname(struct utsname *buf)
{
    long rc = syscall(SYS_uname, buf);
    if (rc != 0)
        return (int)rc;
    int fd = open("/proc/sys/kernel/osrelease", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char text[sizeof buf->release];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    text[strcspn(text, "\n")] = '\0';
    if (text[0] != '\0')
        memcpy(buf->release, text, strlen(text) + 1);
    return 0;
}
