package spice.authority.os.windows;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * A Windows security identifier, parsed from or written to its binary form ({@code SID}: revision
 * 1, sub-authority count, 48-bit big-endian identifier authority, then that many 32-bit
 * little-endian sub-authorities). Immutable; equal when the binary forms are equal.
 */
final class Sid {

    /** {@code SID_MAX_SUB_AUTHORITIES}. */
    static final int MAX_SUB_AUTHORITIES = 15;

    /** NT AUTHORITY\SYSTEM. */
    static final Sid SYSTEM = parse("S-1-5-18");
    /** BUILTIN\Administrators. */
    static final Sid ADMINISTRATORS = parse("S-1-5-32-544");
    /** NT SERVICE\TrustedInstaller. */
    static final Sid TRUSTED_INSTALLER =
            parse("S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464");

    private final byte[] binary;
    private final String text;

    private Sid(byte[] binary) {
        this.binary = binary;
        this.text = render(binary);
    }

    /** The length of a SID with {@code subAuthorities} sub-authorities ({@code GetSidLengthRequired}). */
    static int length(int subAuthorities) {
        return 8 + 4 * subAuthorities;
    }

    /**
     * Reads the SID that starts at {@code offset} and must end at or before {@code limit}.
     *
     * @throws MalformedDescriptorException on a wrong revision, too many sub-authorities, or a
     *     SID that does not fit
     */
    static Sid read(byte[] buf, int offset, int limit) throws MalformedDescriptorException {
        if (offset < 0 || limit > buf.length || offset > limit - 8) {
            throw new MalformedDescriptorException("SID header does not fit");
        }
        if (buf[offset] != 1) {
            throw new MalformedDescriptorException("SID revision is not 1");
        }
        int count = buf[offset + 1] & 0xff;
        if (count > MAX_SUB_AUTHORITIES) {
            throw new MalformedDescriptorException("SID has more than 15 sub-authorities");
        }
        int len = length(count);
        if (offset > limit - len) {
            throw new MalformedDescriptorException("SID sub-authorities do not fit");
        }
        return new Sid(Arrays.copyOfRange(buf, offset, offset + len));
    }

    /** The SID from its binary form, which must be exactly one SID. */
    static Sid fromBinary(byte[] bin) throws MalformedDescriptorException {
        Sid s = read(bin, 0, bin.length);
        if (s.binary.length != bin.length) {
            throw new MalformedDescriptorException("bytes after the SID");
        }
        return s;
    }

    /**
     * The SID from its string form {@code S-1-<authority>-<sub>...}; for constants and tests.
     *
     * @throws IllegalArgumentException if {@code s} is not a SID string
     */
    static Sid parse(String s) {
        String[] parts = s.split("-", -1);
        if (parts.length < 3 || !parts[0].equals("S") || !parts[1].equals("1")
                || parts.length - 3 > MAX_SUB_AUTHORITIES) {
            throw new IllegalArgumentException("not a SID string: " + s);
        }
        long authority = Long.parseLong(parts[2]);
        if (authority < 0 || authority >= (1L << 48)) {
            throw new IllegalArgumentException("identifier authority out of range: " + s);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(1);
        out.write(parts.length - 3);
        for (int shift = 40; shift >= 0; shift -= 8) {
            out.write((int) (authority >>> shift) & 0xff);
        }
        for (int i = 3; i < parts.length; i++) {
            long sub = Long.parseLong(parts[i]);
            if (sub < 0 || sub > 0xffffffffL) {
                throw new IllegalArgumentException("sub-authority out of range: " + s);
            }
            for (int shift = 0; shift < 32; shift += 8) {
                out.write((int) (sub >>> shift) & 0xff);
            }
        }
        return new Sid(out.toByteArray());
    }

    private static String render(byte[] b) {
        long authority = 0;
        for (int i = 2; i < 8; i++) {
            authority = (authority << 8) | (b[i] & 0xff);
        }
        StringBuilder sb = new StringBuilder("S-1-").append(authority);
        for (int i = 8; i < b.length; i += 4) {
            long sub = (b[i] & 0xffL) | (b[i + 1] & 0xffL) << 8 | (b[i + 2] & 0xffL) << 16 | (b[i + 3] & 0xffL) << 24;
            sb.append('-').append(sub);
        }
        return sb.toString();
    }

    /** The binary form (a copy). */
    byte[] binary() {
        return binary.clone();
    }

    /** The length of the binary form. */
    int byteLength() {
        return binary.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Sid other && Arrays.equals(binary, other.binary);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(binary);
    }

    /** The string form, {@code S-1-5-18}. A SID is not a secret. */
    @Override
    public String toString() {
        return text;
    }
}
