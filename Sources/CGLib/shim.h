// GIO, including the Unix-only parts (GUnixFDList, g_unix_signal_add).
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>

// copy_file_range(2) is declared by glibc only under _GNU_SOURCE, which Swift's Glibc module is
// built without; this is glibc's own prototype, so the declarations agree.
#include <sys/types.h>
extern ssize_t copy_file_range (int __infd, __off64_t *__pinoff, int __outfd, __off64_t *__poutoff,
                                size_t __length, unsigned int __flags);
extern int syncfs (int __fd);

// mallopt(3), to keep the service's memory flat while it streams large files.
#include <malloc.h>

// GNU gettext as the C library has it (dgettext, dngettext, bindtextdomain) and setlocale(3):
// the translations of every sentence a person reads (GLibAdapter's Gettext).
#include <libintl.h>
#include <locale.h>

// getauxval(3), the ELF program headers and madvise(2): where the program's code is mapped, to
// take it out of the working set while the service waits (GLibAdapter's MemoryPolicy).
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>

// prctl(2) and setrlimit(2): no core dumps of the service (GLibAdapter's CoreDumps). prctl is
// variadic in C, which Swift cannot call, hence these two fixed-argument forms.
#include <sys/prctl.h>
#include <sys/resource.h>
static inline int ferry_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0L, 0L, 0L); }
static inline int ferry_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0L, 0L, 0L, 0L); }
