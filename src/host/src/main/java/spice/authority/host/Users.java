package spice.authority.host;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;

/** This process's user, without native code of our own. */
public final class Users {
    private Users() {}

    /** The real uid; -1 when unknown. */
    public static long ownUid() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
        } catch (IOException | RuntimeException e) {
            // not Linux: ask the JDK
        }
        try {
            return new com.sun.security.auth.module.UnixSystem().getUid();
        } catch (RuntimeException | LinkageError e) {
            return -1;
        }
    }

    /** This user as a principal that compares by uid with the JDK's peer and file owners. */
    static UserPrincipal own() throws IOException {
        // By name when the uid has a passwd entry, else by number (the JDK then takes it as the uid).
        com.sun.security.auth.module.UnixSystem me = new com.sun.security.auth.module.UnixSystem();
        String self = me.getUsername() != null ? me.getUsername() : Long.toString(me.getUid());
        return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(self);
    }
}
