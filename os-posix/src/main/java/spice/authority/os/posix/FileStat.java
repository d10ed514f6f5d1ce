package spice.authority.os.posix;

import spice.authority.os.FileIdentity;

/**
 * The fields of {@code struct stat} that os-posix uses, decoded from the platform layout.
 * Unsigned C values are carried without sign extension.
 */
record FileStat(long dev, long ino, int mode, long nlink, long uid, long gid, long size) {

    static final int S_IFMT = 0170000;
    static final int S_IFDIR = 0040000;
    static final int S_IFREG = 0100000;
    static final int S_IFLNK = 0120000;
    static final int S_IFIFO = 0010000;
    static final int S_IFSOCK = 0140000;
    static final int S_IFCHR = 0020000;
    static final int S_IFBLK = 0060000;
    static final int S_ISVTX = 01000;

    boolean isDirectory() {
        return (mode & S_IFMT) == S_IFDIR;
    }

    boolean isRegular() {
        return (mode & S_IFMT) == S_IFREG;
    }

    boolean isSymlink() {
        return (mode & S_IFMT) == S_IFLNK;
    }

    /** The permission bits including setuid, setgid and sticky ({@code st_mode & 07777}). */
    int permissions() {
        return mode & 07777;
    }

    FileIdentity identity() {
        return new FileIdentity(dev, ino);
    }

    /** A word for the file type, for refusal messages. */
    String typeName() {
        return switch (mode & S_IFMT) {
            case S_IFDIR -> "a directory";
            case S_IFREG -> "a regular file";
            case S_IFLNK -> "a symbolic link";
            case S_IFIFO -> "a FIFO";
            case S_IFSOCK -> "a socket";
            case S_IFCHR -> "a character device";
            case S_IFBLK -> "a block device";
            default -> "an unknown file type";
        };
    }
}
