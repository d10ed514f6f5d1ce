/*
 * darwin_probe: prints the macOS facts of os-posix's kqueue process watcher and peer
 * credentials -- struct kevent, struct proc_bsdinfo, struct xucred, their constants -- one
 * "NAME VALUE" line each (decimal), as the keys of PosixPlatform.darwinConstants().
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
    return 0;
}
