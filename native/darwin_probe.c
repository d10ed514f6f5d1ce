/*
 * darwin_probe: prints the macOS facts of os-posix's kqueue process watcher, peer credentials
 * and directory listing -- struct kevent, struct proc_bsdinfo, struct xucred, the 64-bit-inode
 * struct dirent, their constants, and whether the directory-stream symbols os-posix links are
 * the functions the header declares -- one "NAME VALUE" line each (decimal), as the keys of
 * PosixPlatform.darwinConstants().
 *
 * macOS only (x86_64 and arm64). DarwinProbeTest compiles it with cc on a Mac and compares the
 * output with the Java table key for key; on Linux the same test checks that this file prints
 * exactly the table's keys (it cannot compile it there).
 *
 *   cc -Wall -Werror -O0 -o darwin_probe darwin_probe.c && ./darwin_probe
 *
 * Each line below names its key literally through the macros, one per line, so that the
 * Linux check can read them.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <libproc.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/event.h>
#include <sys/proc.h>
#include <sys/proc_info.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/ucred.h>
#include <sys/un.h>

#define CONST(name) printf("%s %lld\n", #name, (long long) (name))
#define UCONST(name) printf("%s %llu\n", #name, (unsigned long long) (unsigned int) (name))
#define SIZEOF_STRUCT(s) printf("sizeof.struct_%s %zu\n", #s, sizeof(struct s))
#define SIZEOF_TYPE(t) printf("sizeof.%s %zu\n", #t, sizeof(t))
/*
 * symbol.NAME is 1 when dlsym finds, under the name os-posix links (PosixPlatform's
 * fdopendirSymbol and readdirRSymbol: "$INODE64" appended on x86_64, where the plain names are
 * the 32-bit-inode functions; nothing on arm64), the very function this header declares, whose
 * asm label the SDK chose; 0 otherwise.
 */
#if defined(__x86_64__)
#define INODE64_SUFFIX "$INODE64"
#else
#define INODE64_SUFFIX ""
#endif
#define SYMBOL_INODE64(fn) \
    printf("symbol.%s %d\n", #fn, dlsym(RTLD_DEFAULT, #fn INODE64_SUFFIX) == (void *) &fn)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* glibc deprecates readdir_r; an SDK may */
#define SYMBOL(fn) printf("symbol.%s %d\n", #fn, dlsym(RTLD_DEFAULT, #fn) == (void *) &fn)
#define MEMBER(s, m) do { \
        printf("offsetof.%s.%s %zu\n", #s, #m, offsetof(struct s, m)); \
        printf("sizeof.%s.%s %zu\n", #s, #m, sizeof(((struct s *) 0)->m)); \
    } while (0)

int main(void) {
    SIZEOF_STRUCT(kevent);
    MEMBER(kevent, ident);
    MEMBER(kevent, filter);
    MEMBER(kevent, flags);
    MEMBER(kevent, fflags);
    MEMBER(kevent, data);
    MEMBER(kevent, udata);
    SIZEOF_STRUCT(timespec);
    CONST(EVFILT_PROC);
    CONST(EV_ADD);
    CONST(EV_DELETE);
    CONST(EV_ONESHOT);
    CONST(EV_RECEIPT);
    CONST(EV_ERROR);
    CONST(EV_EOF);
    UCONST(NOTE_EXIT);

    SIZEOF_STRUCT(proc_bsdinfo);
    MEMBER(proc_bsdinfo, pbi_flags);
    MEMBER(proc_bsdinfo, pbi_status);
    MEMBER(proc_bsdinfo, pbi_pid);
    MEMBER(proc_bsdinfo, pbi_ppid);
    MEMBER(proc_bsdinfo, pbi_uid);
    MEMBER(proc_bsdinfo, pbi_ruid);
    MEMBER(proc_bsdinfo, pbi_start_tvsec);
    MEMBER(proc_bsdinfo, pbi_start_tvusec);
    CONST(PROC_PIDTBSDINFO);
    CONST(PROC_FLAG_INEXIT);
    CONST(SZOMB);

    SIZEOF_STRUCT(xucred);
    MEMBER(xucred, cr_version);
    MEMBER(xucred, cr_uid);
    MEMBER(xucred, cr_ngroups);
    CONST(XUCRED_VERSION);
    CONST(SOL_LOCAL);
    CONST(LOCAL_PEERCRED);
    CONST(LOCAL_PEERPID);
    SIZEOF_TYPE(pid_t);
    SIZEOF_TYPE(socklen_t);

    SIZEOF_STRUCT(dirent);
    MEMBER(dirent, d_ino);
    MEMBER(dirent, d_seekoff);
    MEMBER(dirent, d_reclen);
    MEMBER(dirent, d_namlen);
    MEMBER(dirent, d_type);
    MEMBER(dirent, d_name);
    SYMBOL_INODE64(fdopendir);
    SYMBOL_INODE64(readdir_r);
    SYMBOL(closedir);
    return 0;
}
