package spice.authority.os.windows;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds self-relative security descriptors in the binary format, independently of the code under
 * test (its own SID and ACL writer), including descriptors the parser must refuse: a NULL or
 * absent DACL, unknown ACE types, odd revisions, raw ACE bytes.
 *
 * <p>Layout written: the 20-byte header, then the owner SID, the group SID, the DACL.
 */
final class SdBuilder {

    static final String USER = "S-1-5-21-1004336348-1177238915-682003330-1001";
    static final String OTHER_USER = "S-1-5-21-1004336348-1177238915-682003330-1002";
    static final String SYSTEM = "S-1-5-18";
    static final String ADMINS = "S-1-5-32-544";
    static final String TRUSTED_INSTALLER = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464";
    static final String USERS = "S-1-5-32-545";
    static final String AUTHENTICATED_USERS = "S-1-5-11";
    static final String EVERYONE = "S-1-1-0";
    static final String CREATOR_OWNER = "S-1-3-0";

    static final int ALLOWED = 0x00;
    static final int DENIED = 0x01;
    static final int OI = 0x01;
    static final int CI = 0x02;
    static final int NP = 0x04;
    static final int IO = 0x08;
    static final int ID = 0x10;

    static final int FULL = 0x001F01FF;
    static final int MODIFY = 0x001301BF;
    static final int READ_EXECUTE = 0x001200A9;

    private String owner = USER;
    private String group = null;
    private int control = 0x8000 | 0x0004; // SE_SELF_RELATIVE | SE_DACL_PRESENT
    private boolean nullDacl;
    private int aclRevision = 2;
    private final List<byte[]> aces = new ArrayList<>();

    static SdBuilder ancestor() {
        return new SdBuilder().owner(SYSTEM)
                .allow(0, FULL, SYSTEM).allow(0, FULL, ADMINS).allow(0, READ_EXECUTE, USERS);
    }

    /** The helper's own leaf: {@code O:USER D:P(A;;FA;;;USER)}. */
    static SdBuilder leaf() {
        return new SdBuilder().owner(USER).protect().allow(0, FULL, USER);
    }

    SdBuilder owner(String sid) {
        owner = sid;
        return this;
    }

    SdBuilder group(String sid) {
        group = sid;
        return this;
    }

    SdBuilder protect() {
        control |= 0x1000;
        return this;
    }

    SdBuilder control(int c) {
        control = c;
        return this;
    }

    /** SE_DACL_PRESENT with DACL offset 0. */
    SdBuilder nullDacl() {
        nullDacl = true;
        return this;
    }

    SdBuilder aclRevision(int r) {
        aclRevision = r;
        return this;
    }

    SdBuilder allow(int flags, int mask, String sid) {
        return ace(ALLOWED, flags, mask, sid);
    }

    SdBuilder deny(int flags, int mask, String sid) {
        return ace(DENIED, flags, mask, sid);
    }

    /** An ACE of any type with a mask and SID body (the layout of the basic ACE types). */
    SdBuilder ace(int type, int flags, int mask, String sid) {
        byte[] s = sid(sid);
        ByteArrayOutputStream a = new ByteArrayOutputStream();
        a.write(type);
        a.write(flags);
        le16(a, 8 + s.length);
        le32(a, mask);
        a.writeBytes(s);
        aces.add(a.toByteArray());
        return this;
    }

    /** An ACE given byte for byte (header included). */
    SdBuilder rawAce(byte[] ace) {
        aces.add(ace.clone());
        return this;
    }

    byte[] build() {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        int ownerOff = 0;
        int groupOff = 0;
        int daclOff = 0;
        if (owner != null) {
            ownerOff = 20 + body.size();
            body.writeBytes(sid(owner));
        }
        if (group != null) {
            groupOff = 20 + body.size();
            body.writeBytes(sid(group));
        }
        if ((control & 0x0004) != 0 && !nullDacl) {
            daclOff = 20 + body.size();
            int size = 8;
            for (byte[] a : aces) {
                size += a.length;
            }
            body.write(aclRevision);
            body.write(0);
            le16(body, size);
            le16(body, aces.size());
            le16(body, 0);
            for (byte[] a : aces) {
                body.writeBytes(a);
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(1);
        out.write(0);
        le16(out, control);
        le32(out, ownerOff);
        le32(out, groupOff);
        le32(out, 0);
        le32(out, daclOff);
        out.writeBytes(body.toByteArray());
        return out.toByteArray();
    }

    /** The binary SID of {@code S-1-a-s1-s2...}. */
    static byte[] sid(String text) {
        String[] p = text.split("-");
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        o.write(1);
        o.write(p.length - 3);
        long auth = Long.parseLong(p[2]);
        for (int i = 5; i >= 0; i--) {
            o.write((int) (auth >> (8 * i)) & 0xff);
        }
        for (int i = 3; i < p.length; i++) {
            le32(o, (int) Long.parseLong(p[i]));
        }
        return o.toByteArray();
    }

    static void le16(ByteArrayOutputStream o, int v) {
        o.write(v & 0xff);
        o.write((v >>> 8) & 0xff);
    }

    static void le32(ByteArrayOutputStream o, int v) {
        le16(o, v);
        le16(o, v >>> 16);
    }
}
