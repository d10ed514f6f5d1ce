/*
 * stat_probe: prints the struct stat layout, type sizes and the flag and errno constants
 * of the machine it is compiled on, one "NAME VALUE" line each (decimal).
 *
 * The names are the keys of os-posix's PosixPlatform table; the test
 * NativeProbeTest compiles this file with gcc and compares the two.
 *
 *   cc -O0 -o stat_probe stat_probe.c && ./stat_probe
 *
 * On macOS x86_64 the 64-bit-inode struct stat is the default for current SDKs
 * (_DARWIN_FEATURE_64_BIT_INODE); os-posix binds the matching fstat$INODE64 symbols.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define CONST(name) printf("%s %lld\n", #name, (long long) (name))
#define STATX_MEMBER(m) printf("offsetof.statx.%s %zu\n", #m, offsetof(struct statx, m))
#define MEMBER(m) do { \
        printf("offsetof.stat.%s %zu\n", #m, offsetof(struct stat, m)); \
        printf("sizeof.stat.%s %zu\n", #m, sizeof(((struct stat *) 0)->m)); \
    } while (0)

int main(void) {
    printf("sizeof.struct_stat %zu\n", sizeof(struct stat));
    MEMBER(st_dev);
    MEMBER(st_ino);
    MEMBER(st_mode);
    MEMBER(st_nlink);
    MEMBER(st_uid);
    MEMBER(st_gid);
    MEMBER(st_size);
    printf("sizeof.mode_t %zu\n", sizeof(mode_t));
    printf("sizeof.uid_t %zu\n", sizeof(uid_t));

    CONST(O_RDONLY);
    CONST(O_WRONLY);
    CONST(O_RDWR);
    CONST(O_CREAT);
    CONST(O_EXCL);
    CONST(O_TRUNC);
    CONST(O_NONBLOCK);
    CONST(O_DIRECTORY);
    CONST(O_NOFOLLOW);
    CONST(O_CLOEXEC);
    CONST(AT_FDCWD);
    CONST(AT_SYMLINK_NOFOLLOW);
    CONST(AT_REMOVEDIR);
    CONST(LOCK_SH);
    CONST(LOCK_EX);
    CONST(LOCK_NB);
    CONST(LOCK_UN);
    CONST(S_IFMT);
    CONST(S_IFDIR);
    CONST(S_IFREG);
    CONST(S_IFLNK);
    CONST(S_IFIFO);
    CONST(S_IFSOCK);
    CONST(S_IFCHR);
    CONST(S_IFBLK);
    CONST(S_ISVTX);

    CONST(EPERM);
    CONST(ENOENT);
    CONST(EINTR);
    CONST(EIO);
    CONST(ENXIO);
    CONST(EBADF);
    CONST(ENOMEM);
    CONST(EACCES);
    CONST(EBUSY);
    CONST(EEXIST);
    CONST(EXDEV);
    CONST(ENOTDIR);
    CONST(EISDIR);
    CONST(EINVAL);
    CONST(EMFILE);
    CONST(ENOSPC);
    CONST(EROFS);
    CONST(EMLINK);
    CONST(EAGAIN);
    CONST(EWOULDBLOCK);
    CONST(ELOOP);
    CONST(ENAMETOOLONG);
    CONST(ENOTEMPTY);
    CONST(EOPNOTSUPP);
    CONST(EDQUOT);
#ifdef STATX_MNT_ID
    /* Linux statx (glibc 2.28; STATX_MNT_ID from glibc 2.32) */
    CONST(AT_EMPTY_PATH);
    CONST(STATX_MNT_ID);
    printf("sizeof.struct_statx %zu\n", sizeof(struct statx));
    STATX_MEMBER(stx_mask);
    STATX_MEMBER(stx_nlink);
    STATX_MEMBER(stx_uid);
    STATX_MEMBER(stx_gid);
    STATX_MEMBER(stx_mode);
    STATX_MEMBER(stx_ino);
    STATX_MEMBER(stx_size);
    STATX_MEMBER(stx_dev_major);
    STATX_MEMBER(stx_dev_minor);
    STATX_MEMBER(stx_mnt_id);
#endif
    return 0;
}
