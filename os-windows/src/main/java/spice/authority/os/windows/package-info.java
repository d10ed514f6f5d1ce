/**
 * The Windows implementation of the {@code spice.authority.os} SPI: handle-relative
 * {@code NtCreateFile} operations under a retained directory handle, owner and DACL checks of
 * every component against the trusted principals, {@code FILE_ID_INFO} identities,
 * {@code LockFileEx} locks, a process watcher on {@code OpenProcess(SYNCHRONIZE)}, and the owner of
 * a loopback TCP peer ({@code GetExtendedTcpTable}, then the process token's user SID).
 *
 * <p>The rules (security-descriptor parsing and evaluation, path and name rules, structure
 * layouts, directory-listing and TCP-table decoding, the peer check) are pure Java and tested on
 * every OS. The calls into Windows go through four package-private JNA doors ({@code Kernel32},
 * {@code Advapi32}, {@code Ntdll}, {@code Iphlpapi}) behind the {@code WindowsCalls} interface; that part runs only on Windows
 * (README.md in this module says what has run where).
 */
package spice.authority.os.windows;
