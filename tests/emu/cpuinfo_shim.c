/* LD_PRELOAD shim for running ORT's arm64 library under qemu-aarch64 on an x86 host: qemu's user
 * mode passes the host's /proc/cpuinfo through, an x86 one, and ORT's CPU detection fails on it.
 * Opening /proc/cpuinfo here returns an AArch64 description instead: one "processor" block per
 * online CPU, with the MIDR fields of ACTX_EMU_CPU_PART (e.g. "0x41 0xd0c": implementer and part
 * of a Neoverse N1) and the Features line of ACTX_EMU_CPU_FEATURES. Every other path opens as
 * usual. Test-only; never linked into the libraries. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int is_cpuinfo(const char *path) {
  return path != NULL && strcmp(path, "/proc/cpuinfo") == 0;
}

/* A file descriptor reading the AArch64 description from its start, or -1. */
static int fake_cpuinfo(void) {
  const char *part = getenv("ACTX_EMU_CPU_PART");
  const char *features = getenv("ACTX_EMU_CPU_FEATURES");
  unsigned implementer = 0x41, part_number = 0xd08;
  if (part != NULL) sscanf(part, "%x %x", &implementer, &part_number);
  if (features == NULL) features = "fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid";
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  const int fd = memfd_create("cpuinfo", 0);
  if (fd < 0) return -1;
  for (long i = 0; i < cpus; i++) {
    char block[512];
    const int len = snprintf(block, sizeof block,
                             "processor\t: %ld\nBogoMIPS\t: 50.00\nFeatures\t: %s\n"
                             "CPU implementer\t: 0x%02x\nCPU architecture: 8\nCPU variant\t: 0x0\n"
                             "CPU part\t: 0x%03x\nCPU revision\t: 1\n\n",
                             i, features, implementer, part_number);
    if (len <= 0 || write(fd, block, (size_t)len) != len) {
      close(fd);
      return -1;
    }
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef FILE *(*fopen_fn)(const char *, const char *);

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define DEFINE_OPEN(name)                                  \
  int name(const char *path, int flags, ...) {             \
    va_list ap;                                            \
    va_start(ap, flags);                                   \
    const mode_t mode = mode_arg(flags, ap);               \
    va_end(ap);                                            \
    if (is_cpuinfo(path)) return fake_cpuinfo();           \
    return REAL(#name, open_fn)(path, flags, mode);        \
  }
DEFINE_OPEN(open)
DEFINE_OPEN(open64)

#define DEFINE_OPENAT(name)                                 \
  int name(int dir, const char *path, int flags, ...) {     \
    va_list ap;                                             \
    va_start(ap, flags);                                    \
    const mode_t mode = mode_arg(flags, ap);                \
    va_end(ap);                                             \
    if (is_cpuinfo(path)) return fake_cpuinfo();            \
    return REAL(#name, openat_fn)(dir, path, flags, mode);  \
  }
DEFINE_OPENAT(openat)
DEFINE_OPENAT(openat64)

#define DEFINE_FOPEN(name)                                        \
  FILE *name(const char *path, const char *mode) {                \
    if (is_cpuinfo(path)) {                                       \
      const int fd = fake_cpuinfo();                              \
      return fd < 0 ? NULL : fdopen(fd, "r");                     \
    }                                                             \
    return REAL(#name, fopen_fn)(path, mode);                     \
  }
DEFINE_FOPEN(fopen)
DEFINE_FOPEN(fopen64)
