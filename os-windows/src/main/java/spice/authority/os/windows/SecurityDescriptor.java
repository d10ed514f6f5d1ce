package spice.authority.os.windows;

import java.util.ArrayList;
import java.util.List;

/**
 * A parsed self-relative {@code SECURITY_DESCRIPTOR} as {@code GetSecurityInfo} returns it, with
 * the parts this module judges: control bits, owner, group and DACL. The SACL is bounds-checked
 * and otherwise ignored.
 *
 * <p><b>Guarantees.</b> {@link #parse} accepts only a structurally sound descriptor: revision 1,
 * {@code SE_SELF_RELATIVE} set, every offset inside the buffer and past the 20-byte header, every
 * SID and ACL and every ACE inside its container, ACE sizes multiples of 4, an ACE count that the
 * ACL holds. Anything else, including any truncation, is a {@link MalformedDescriptorException}:
 * never a partial result and never an unchecked exception. ACE types other than
 * {@code ACCESS_ALLOWED} and {@code ACCESS_DENIED} are kept with their type and no SID, so that the
 * evaluation can refuse them by name.
 *
 * @param control the {@code SECURITY_DESCRIPTOR_CONTROL} bits
 * @param owner the owner, or null when the descriptor has none
 * @param group the primary group, or null
 * @param daclPresent whether {@code SE_DACL_PRESENT} is set
 * @param dacl the DACL, or null: absent ({@code daclPresent} false) or a NULL DACL (present with
 *     offset 0); both grant everyone everything
 */
record SecurityDescriptor(int control, Sid owner, Sid group, boolean daclPresent, Acl dacl) {

    static final int HEADER_SIZE = 20;
    static final int SE_OWNER_DEFAULTED = 0x0001;
    static final int SE_DACL_PRESENT = 0x0004;
    static final int SE_SACL_PRESENT = 0x0010;
    static final int SE_DACL_AUTO_INHERITED = 0x0400;
    static final int SE_DACL_PROTECTED = 0x1000;
    static final int SE_SELF_RELATIVE = 0x8000;

    /** Whether {@code SE_DACL_PROTECTED} is set: the DACL does not take ACEs from the parent. */
    boolean daclProtected() {
        return (control & SE_DACL_PROTECTED) != 0;
    }

    /** Whether the DACL is absent or NULL (either way: full access for everyone). */
    boolean nullDacl() {
        return !daclPresent || dacl == null;
    }

    /** An access control list: its revision and entries in order. */
    record Acl(int revision, List<Ace> aces) {
        Acl {
            aces = List.copyOf(aces);
        }
    }

    /**
     * One access control entry.
     *
     * @param type the {@code AceType} byte
     * @param flags the {@code AceFlags} byte
     * @param mask the access mask ({@code ACCESS_ALLOWED} and {@code ACCESS_DENIED} only; else 0)
     * @param sid the trustee ({@code ACCESS_ALLOWED} and {@code ACCESS_DENIED} only; else null)
     */
    record Ace(int type, int flags, int mask, Sid sid) {

        static final int ACCESS_ALLOWED_ACE_TYPE = 0x00;
        static final int ACCESS_DENIED_ACE_TYPE = 0x01;

        static final int OBJECT_INHERIT_ACE = 0x01;
        static final int CONTAINER_INHERIT_ACE = 0x02;
        static final int NO_PROPAGATE_INHERIT_ACE = 0x04;
        static final int INHERIT_ONLY_ACE = 0x08;
        static final int INHERITED_ACE = 0x10;
        /** Every flag with a documented meaning in a DACL entry. */
        static final int KNOWN_FLAGS = 0x1f;

        boolean allowed() {
            return type == ACCESS_ALLOWED_ACE_TYPE;
        }

        boolean denied() {
            return type == ACCESS_DENIED_ACE_TYPE;
        }

        boolean inheritOnly() {
            return (flags & INHERIT_ONLY_ACE) != 0;
        }

        boolean inherited() {
            return (flags & INHERITED_ACE) != 0;
        }
    }

    /**
     * Parses a self-relative security descriptor.
     *
     * @throws MalformedDescriptorException on any structural fault (see the class guarantees)
     */
    static SecurityDescriptor parse(byte[] sd) throws MalformedDescriptorException {
        if (sd == null || sd.length < HEADER_SIZE) {
            throw new MalformedDescriptorException("shorter than the 20-byte header");
        }
        if (sd[0] != 1) {
            throw new MalformedDescriptorException("descriptor revision is not 1");
        }
        int control = u16(sd, 2);
        if ((control & SE_SELF_RELATIVE) == 0) {
            throw new MalformedDescriptorException("not self-relative");
        }
        long ownerOff = u32(sd, 4);
        long groupOff = u32(sd, 8);
        long saclOff = u32(sd, 12);
        long daclOff = u32(sd, 16);
        Sid owner = ownerOff == 0 ? null : Sid.read(sd, offset(sd, ownerOff, "owner"), sd.length);
        Sid group = groupOff == 0 ? null : Sid.read(sd, offset(sd, groupOff, "group"), sd.length);
        if ((control & SE_SACL_PRESENT) != 0 && saclOff != 0) {
            readAcl(sd, offset(sd, saclOff, "SACL"), false);
        }
        boolean daclPresent = (control & SE_DACL_PRESENT) != 0;
        Acl dacl = null;
        if (daclPresent && daclOff != 0) {
            dacl = readAcl(sd, offset(sd, daclOff, "DACL"), true);
        }
        return new SecurityDescriptor(control, owner, group, daclPresent, dacl);
    }

    private static int offset(byte[] sd, long off, String what) throws MalformedDescriptorException {
        if (off < HEADER_SIZE || off >= sd.length) {
            throw new MalformedDescriptorException(what + " offset outside the descriptor");
        }
        return (int) off;
    }

    /** {@code ACL_REVISION} and {@code ACL_REVISION_DS}. */
    private static boolean knownAclRevision(int r) {
        return r == 2 || r == 4;
    }

    private static Acl readAcl(byte[] sd, int off, boolean entries) throws MalformedDescriptorException {
        if (off > sd.length - 8) {
            throw new MalformedDescriptorException("ACL header does not fit");
        }
        int revision = sd[off] & 0xff;
        if (!knownAclRevision(revision)) {
            throw new MalformedDescriptorException("unknown ACL revision " + revision);
        }
        int aclSize = u16(sd, off + 2);
        int count = u16(sd, off + 4);
        if (aclSize < 8 || aclSize % 4 != 0) {
            throw new MalformedDescriptorException("ACL size " + aclSize + " is not a multiple of 4 of at least 8");
        }
        if (off > sd.length - aclSize) {
            throw new MalformedDescriptorException("ACL extends past the descriptor");
        }
        int end = off + aclSize;
        int pos = off + 8;
        List<Ace> aces = new ArrayList<>(Math.min(count, aclSize / 8));
        for (int i = 0; i < count; i++) {
            if (pos > end - 4) {
                throw new MalformedDescriptorException("ACE " + i + " header does not fit in the ACL");
            }
            int type = sd[pos] & 0xff;
            int flags = sd[pos + 1] & 0xff;
            int size = u16(sd, pos + 2);
            if (size < 8 || size % 4 != 0) {
                throw new MalformedDescriptorException("ACE " + i + " size " + size + " is not a multiple of 4 of at least 8");
            }
            if (pos > end - size) {
                throw new MalformedDescriptorException("ACE " + i + " extends past the ACL");
            }
            if (entries && (type == Ace.ACCESS_ALLOWED_ACE_TYPE || type == Ace.ACCESS_DENIED_ACE_TYPE)) {
                int mask = (int) u32(sd, pos + 4);
                Sid sid = Sid.read(sd, pos + 8, pos + size);
                aces.add(new Ace(type, flags, mask, sid));
            } else {
                aces.add(new Ace(type, flags, 0, null));
            }
            pos += size;
        }
        return new Acl(revision, aces);
    }

    private static int u16(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8;
    }

    private static long u32(byte[] b, int off) {
        return (b[off] & 0xffL) | (b[off + 1] & 0xffL) << 8 | (b[off + 2] & 0xffL) << 16 | (b[off + 3] & 0xffL) << 24;
    }

    /**
     * The descriptor new directories and files of the authority get (wire-format d.8): owner
     * {@code user}, a protected DACL with one {@code ACCESS_ALLOWED} entry granting
     * {@code FILE_ALL_ACCESS} to {@code user}, no group, no SACL. In SDDL:
     * {@code O:<user>D:P(A;;FA;;;<user>)}.
     */
    static byte[] userOnly(Sid user) {
        byte[] sid = user.binary();
        int aceSize = 8 + sid.length;
        int aclSize = 8 + aceSize;
        int ownerOff = HEADER_SIZE;
        int daclOff = ownerOff + sid.length;
        byte[] out = new byte[daclOff + aclSize];
        out[0] = 1;
        put16(out, 2, SE_SELF_RELATIVE | SE_DACL_PRESENT | SE_DACL_PROTECTED);
        put32(out, 4, ownerOff);
        put32(out, 16, daclOff);
        System.arraycopy(sid, 0, out, ownerOff, sid.length);
        out[daclOff] = 2; // ACL_REVISION
        put16(out, daclOff + 2, aclSize);
        put16(out, daclOff + 4, 1);
        int ace = daclOff + 8;
        out[ace] = Ace.ACCESS_ALLOWED_ACE_TYPE;
        put16(out, ace + 2, aceSize);
        put32(out, ace + 4, AccessRights.FILE_ALL_ACCESS);
        System.arraycopy(sid, 0, out, ace + 8, sid.length);
        return out;
    }

    private static void put16(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
    }

    private static void put32(byte[] b, int off, int v) {
        put16(b, off, v);
        put16(b, off + 2, v >>> 16);
    }
}
