/*
 * Native front of the fake npu-smi, installed by the fake driver at /usr/local/bin/npu-smi
 * inside a simulated host; the answers are computed by the Python part (npu_smi.py,
 * installed at PY_PART), which keeps each one for this front (its docstring, "Kept answers").
 *
 * Why native: the probe runs npu-smi ten times per host and eight simulated hosts share a
 * two-core machine with the tool being measured. A shell front that printed a kept answer
 * cost ~4.7 ms of CPU a call (dash, a stat subshell, cat); the real npu-smi is a native
 * binary, so the fake's cost would swamp the measurement. Built static on the controller
 * (tests/sim/packages.py), so it runs in any host root.
 *
 * A kept answer is printed only when the cache file's first line equals the stamp computed
 * here, before Python reads anything; on a miss or any doubt the Python part runs, with the
 * stamp in NPU_SMI_STAMP and the stamped files in NPU_SMI_STAMPED.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATE "/var/lib/ascend-sim/state.json"
#define INSTALL_INFO "/etc/ascend_install.info"
#define CACHE_DIR "/var/lib/ascend-sim/npu-smi-cache"
#define DEFAULT_BASE "/usr/local/Ascend"
#define PYTHON "/usr/bin/python3"
/* Where installer.py (NPU_SMI_PY) puts the Python part: hidden and not executable, so no
 * extra command shows in a PATH folder. */
#define PY_PART "/usr/local/bin/.npu-smi.py"
#define BASE_KEY "Driver_Install_Path_Param"
#define BUF 8192

/* Whole file in a NUL-terminated heap buffer; NULL with errno set when it cannot be read. */
static char *slurp(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        cap = (size_t)st.st_size;
    for (;;) {
        if (n == cap) {  /* the file grew, or fstat gave no size: make room */
            cap = cap * 2 + 4096;
            char *more = realloc(buf, cap + 1);
            if (more == NULL)
                break;
            buf = more;
        } else if (buf == NULL && (buf = malloc(cap + 1)) == NULL) {
            break;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        if (got == 0) {
            close(fd);
            buf[n] = '\0';
            *len = n;
            return buf;
        }
        n += (size_t)got;
    }
    int saved = errno;
    close(fd);
    free(buf);
    errno = saved ? saved : ENOMEM;
    return NULL;
}

/* Python's str.splitlines() boundaries and str.strip() whitespace, for ASCII text. */
static int py_line_break(unsigned char c) {
    return c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e);
}

static int py_space(unsigned char c) {
    return (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= ' ');
}

/*
 * The driver base as npu_smi.install_path() reads it (the last Driver_Install_Path_Param,
 * key and value stripped, default when absent or the file is missing), into out. 0 when
 * unsure that Python would read the same (non-ASCII text, odd characters, unreadable file);
 * the Python part refuses to keep an answer whose files are not the stamped ones anyway.
 */
static int driver_base(char *out, size_t size) {
    size_t len = 0;
    char *text = slurp(INSTALL_INFO, &len);
    int missing = text == NULL && errno == ENOENT;
    snprintf(out, size, "%s", DEFAULT_BASE);
    if (text == NULL)
        return missing;
    int ok = 1;
    for (size_t i = 0; i < len && ok; i++)
        if ((unsigned char)text[i] >= 0x80 || text[i] == '\0')
            ok = 0;
    for (char *line = text; ok && line < text + len;) {
        char *end = line;
        while (end < text + len && !py_line_break((unsigned char)*end))
            end++;
        char *eq = memchr(line, '=', (size_t)(end - line));
        if (eq != NULL) {
            char *k = line, *ke = eq, *v = eq + 1, *ve = end;
            while (k < ke && py_space((unsigned char)*k)) k++;
            while (ke > k && py_space((unsigned char)ke[-1])) ke--;
            while (v < ve && py_space((unsigned char)*v)) v++;
            while (ve > v && py_space((unsigned char)ve[-1])) ve--;
            size_t klen = strlen(BASE_KEY);
            if ((size_t)(ke - k) == klen && memcmp(k, BASE_KEY, klen) == 0) {
                for (char *c = v; c < ve; c++)
                    if ((unsigned char)*c <= ' ' || *c == 0x7f)
                        ok = 0;  /* NPU_SMI_STAMPED is split on whitespace */
                if ((size_t)(ve - v) >= size)
                    ok = 0;
                if (ok)
                    snprintf(out, size, "%.*s", (int)(ve - v), v);
            }
        }
        /* "\r\n" is one boundary for splitlines; as two, it only adds an empty line. */
        line = end + 1;
    }
    free(text);
    return ok;
}

/* base/driver/version.info as os.path.join(base, "driver", "version.info") spells it. */
static int joined(char *out, size_t size, const char *base, const char *rest) {
    size_t n = strlen(base);
    const char *sep = (n == 0 || base[n - 1] == '/') ? "" : "/";
    int w = snprintf(out, size, "%s%s%s", base, sep, rest);
    return w >= 0 && (size_t)w < size;
}

/* Appends to out at *at; 0 when it does not fit. */
__attribute__((format(printf, 4, 5)))
static int append(char *out, size_t size, size_t *at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *at, size - *at, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= size - *at)
        return 0;
    *at += (size_t)w;
    return 1;
}

/*
 * The stamp: the arguments (the cache file name joins them with '_', which an argument may
 * hold too: "-t_board" and "-t board" share a name, never a stamp), then per file its name
 * and the ctime (ns), size, device and inode of what it names, or '-' when there is nothing
 * there. ctime cannot be set back by a copy, an archive or touch, so an input rewritten in
 * place still changes the stamp. 0 when a file cannot be looked at (Python would fail too).
 */
static int stamp_of(char *out, size_t size, int argc, char **argv, char *const files[4]) {
    size_t at = 0;
    if (!append(out, size, &at, "argv:"))
        return 0;
    for (int i = 1; i < argc; i++)
        if (!append(out, size, &at, "%s ", argv[i]))
            return 0;
    if (!append(out, size, &at, "|"))
        return 0;
    for (int i = 0; i < 4; i++) {
        struct stat st;
        int ok;
        if (stat(files[i], &st) == 0)
            ok = append(out, size, &at, " %s:%lld.%09ld:%lld:%llu:%llu", files[i],
                        (long long)st.st_ctim.tv_sec, (long)st.st_ctim.tv_nsec,
                        (long long)st.st_size, (unsigned long long)st.st_dev,
                        (unsigned long long)st.st_ino);
        else if (errno == ENOENT || errno == ENOTDIR)
            ok = append(out, size, &at, " %s:-", files[i]);
        else
            ok = 0;
        if (!ok)
            return 0;
    }
    return 1;
}

/* The cache file's name as the Python part (keep_stamped) writes it; 0 when there is none. */
static int cache_name(char *out, size_t size, int argc, char **argv) {
    size_t at = 0;
    if (!append(out, size, &at, "%s/", CACHE_DIR))
        return 0;
    size_t start = at;
    for (int i = 1; i < argc; i++) {
        if (!append(out, size, &at, i > 1 ? "_%s" : "%s", argv[i]))
            return 0;
    }
    if (at == start)
        return 0;
    for (size_t i = start; i < at; i++) {
        char c = out[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return append(out, size, &at, ".fast");
}

static int write_all(const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return 0;
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

/* Prints the kept answer and returns its exit status when it was kept under this stamp;
 * -1 (nothing printed) otherwise. Layout: stamp line, exit status line, output. */
static int kept(const char *path, const char *stamp) {
    size_t len = 0;
    char *text = slurp(path, &len);
    if (text == NULL)
        return -1;
    size_t slen = strlen(stamp);
    int rc = -1;
    if (len > slen && memcmp(text, stamp, slen) == 0 && text[slen] == '\n') {
        char *status = text + slen + 1, *nl = memchr(status, '\n', len - slen - 1);
        if (nl != NULL && nl > status && nl - status <= 3) {
            rc = 0;
            for (char *c = status; c < nl && rc >= 0; c++)
                rc = (*c >= '0' && *c <= '9') ? rc * 10 + (*c - '0') : -1;
            if (rc > 255)
                rc = -1;
            if (rc >= 0 && !write_all(nl + 1, len - (size_t)(nl + 1 - text)))
                rc = 1;  /* stdout is gone: the answer cannot be given either way */
        }
    }
    free(text);
    return rc;
}

int main(int argc, char **argv) {
    char base[BUF], drv[BUF], fw[BUF], name[BUF], stamp[4 * BUF], stamped[4 * BUF];
    /* Only a stamp computed here may reach the Python part, never one from the caller. */
    unsetenv("NPU_SMI_STAMPED");
    unsetenv("NPU_SMI_STAMP");
    if (driver_base(base, sizeof base) &&
        joined(drv, sizeof drv, base, "driver/version.info") &&
        joined(fw, sizeof fw, base, "firmware/version.info") &&
        cache_name(name, sizeof name, argc, argv)) {
        char *files[4] = {STATE, INSTALL_INFO, drv, fw};
        int w = snprintf(stamped, sizeof stamped, "%s %s %s %s", STATE, INSTALL_INFO, drv, fw);
        if (w > 0 && (size_t)w < sizeof stamped &&
            stamp_of(stamp, sizeof stamp, argc, argv, files)) {
            int rc = kept(name, stamp);
            if (rc >= 0)
                return rc;
            setenv("NPU_SMI_STAMPED", stamped, 1);
            setenv("NPU_SMI_STAMP", stamp, 1);
        }
    }
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (args == NULL)
        return 255;
    args[0] = PYTHON;
    args[1] = "-S";
    args[2] = PY_PART;
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    execv(PYTHON, args);
    int err = errno;
    fprintf(stderr, "npu-smi: %s: %s\n", PYTHON, strerror(err));
    return err == ENOENT ? 127 : 126;
}
