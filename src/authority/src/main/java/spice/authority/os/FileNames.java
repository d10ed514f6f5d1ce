package spice.authority.os;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.regex.Pattern;

/**
 * The one rule for names of files inside a {@link SecureDirectory}, shared by every
 * platform implementation so that a name is valid everywhere or nowhere.
 *
 * <p>A name is a single path component of 1 to 128 characters from {@code [A-Za-z0-9._-]}
 * that starts with a letter or digit. This excludes {@code .}, {@code ..}, separators,
 * NUL, Windows device and stream syntax, and every name beginning with {@code .}, which is
 * reserved for the temporary files of {@link SecureDirectory#writeAtomically}.
 * All names of wire-format d.1 ({@code identity.key}, {@code identity.lock},
 * {@code run-<64 hex>.lock}, {@code run-<64 hex>.state}) are valid.
 *
 * <p>The temporary file of a write to {@code name} is named {@code .<name>.<24 lowercase hex>.tmp}
 * (wire-format d.1 and d.4 step 2; the reference writer uses the same pattern), which no valid
 * name can collide with. {@link #temporaryTarget} recognises exactly that pattern.
 */
public final class FileNames {

    /** Names ending with this suffix are lock files: lockable, never written or replaced. */
    public static final String LOCK_SUFFIX = ".lock";

    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    /** {@code .} target {@code .} 24 lowercase hex {@code .tmp}; the target is checked by {@link #VALID}. */
    private static final Pattern TEMPORARY = Pattern.compile("\\.(.+)\\.[0-9a-f]{24}\\.tmp");
    /** Bytes of randomness in a temporary name (24 hex digits). */
    public static final int TEMPORARY_NONCE_BYTES = 12;

    /**
     * One generator per thread. {@code new SecureRandom()} on Linux is NativePRNG, whose instances
     * all share one lock: with 32 hosts suspending at once, a tenth of the busy request threads
     * were found blocked there ({@code jcmd PID Thread.print}, bench/RESULTS.md, session 7).
     */
    private static final ThreadLocal<SecureRandom> NONCES = ThreadLocal.withInitial(FileNames::generator);

    private FileNames() {}

    /**
     * {@link #TEMPORARY_NONCE_BYTES} fresh random bytes for {@link #temporaryName}, from this
     * thread's own DRBG (seeded by the JDK from the system's entropy), so concurrent writers never
     * wait for each other here.
     */
    public static byte[] temporaryNonce() {
        byte[] nonce = new byte[TEMPORARY_NONCE_BYTES];
        NONCES.get().nextBytes(nonce);
        return nonce;
    }

    private static SecureRandom generator() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            return new SecureRandom(); // every JDK since 9 has DRBG; the default still works, with its lock
        }
    }

    /**
     * Checks {@code name}.
     *
     * @param directory the directory path, for the refusal message
     * @param name the candidate file name
     * @return {@code name}
     * @throws DirectoryRefusedException with {@link DirectoryRefusedException.Category#NAME}
     */
    public static String requireValid(String directory, String name) throws DirectoryRefusedException {
        if (name == null || !VALID.matcher(name).matches()) {
            throw new DirectoryRefusedException(
                    DirectoryRefusedException.Category.NAME,
                    directory + "/" + printable(name),
                    "a file name must be 1-128 characters of [A-Za-z0-9._-] starting with a letter or digit");
        }
        return name;
    }

    /**
     * The temporary name for a write to {@code target}: {@code .<target>.<hex of nonce>.tmp}.
     *
     * @param target a valid file name that is not a lock name
     * @param nonce {@link #TEMPORARY_NONCE_BYTES} fresh random bytes
     */
    public static String temporaryName(String target, byte[] nonce) {
        if (target == null || !VALID.matcher(target).matches() || isLockName(target)) {
            throw new IllegalArgumentException("not a writable file name: " + printable(target));
        }
        if (nonce.length != TEMPORARY_NONCE_BYTES) {
            throw new IllegalArgumentException("a temporary name takes " + TEMPORARY_NONCE_BYTES + " random bytes");
        }
        return "." + target + "." + java.util.HexFormat.of().formatHex(nonce) + ".tmp";
    }

    /**
     * The target of a temporary name, matched strictly: a leading {@code .}, a valid file name
     * that is not a lock name, {@code .}, exactly 24 lowercase hex digits, {@code .tmp}.
     *
     * @return the target, or empty for any other name (valid names, near misses, foreign files)
     */
    public static java.util.Optional<String> temporaryTarget(String name) {
        if (name == null) {
            return java.util.Optional.empty();
        }
        java.util.regex.Matcher m = TEMPORARY.matcher(name);
        if (!m.matches()) {
            return java.util.Optional.empty();
        }
        String target = m.group(1);
        return VALID.matcher(target).matches() && !isLockName(target)
                ? java.util.Optional.of(target) : java.util.Optional.empty();
    }

    /** Whether {@code name} names a lock file. */
    public static boolean isLockName(String name) {
        return name.endsWith(LOCK_SUFFIX);
    }

    /**
     * Renders a possibly hostile name or path for a one-line message: control characters
     * are escaped and the length is capped.
     */
    public static String printable(String name) {
        if (name == null) {
            return "<null>";
        }
        if (name.length() <= 160 && isPlain(name)) {
            return name; // the common case, on every path walk: nothing to escape
        }
        StringBuilder sb = new StringBuilder();
        name.codePoints().limit(160).forEach(cp -> {
            if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
                sb.append(String.format("\\x%02x", cp));
            } else {
                sb.appendCodePoint(cp);
            }
        });
        return sb.toString();
    }

    private static boolean isPlain(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }
}
