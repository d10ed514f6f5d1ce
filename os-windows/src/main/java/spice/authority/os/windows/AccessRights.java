package spice.authority.os.windows;

import java.util.ArrayList;
import java.util.List;

/** Access-mask bits of file and directory objects (winnt.h), and their names for messages. */
final class AccessRights {

    static final int FILE_LIST_DIRECTORY = 0x00000001;
    static final int FILE_READ_DATA = 0x00000001;
    static final int FILE_ADD_FILE = 0x00000002;
    static final int FILE_WRITE_DATA = 0x00000002;
    static final int FILE_ADD_SUBDIRECTORY = 0x00000004;
    static final int FILE_APPEND_DATA = 0x00000004;
    static final int FILE_READ_EA = 0x00000008;
    static final int FILE_WRITE_EA = 0x00000010;
    static final int FILE_TRAVERSE = 0x00000020;
    static final int FILE_DELETE_CHILD = 0x00000040;
    static final int FILE_READ_ATTRIBUTES = 0x00000080;
    static final int FILE_WRITE_ATTRIBUTES = 0x00000100;

    static final int DELETE = 0x00010000;
    static final int READ_CONTROL = 0x00020000;
    static final int WRITE_DAC = 0x00040000;
    static final int WRITE_OWNER = 0x00080000;
    static final int SYNCHRONIZE = 0x00100000;
    static final int ACCESS_SYSTEM_SECURITY = 0x01000000;
    static final int MAXIMUM_ALLOWED = 0x02000000;
    static final int GENERIC_ALL = 0x10000000;
    static final int GENERIC_EXECUTE = 0x20000000;
    static final int GENERIC_WRITE = 0x40000000;
    static final int GENERIC_READ = 0x80000000;

    /** {@code STANDARD_RIGHTS_REQUIRED | SYNCHRONIZE | 0x1FF}. */
    static final int FILE_ALL_ACCESS = 0x001F01FF;

    /** The object-specific and standard rights: everything but the generic and special bits. */
    static final int SPECIFIC_AND_STANDARD = 0x001FFFFF;

    /**
     * The rights that let a principal substitute, move or re-permission a component of the
     * authority path, directly or through generic mapping: delete or rename it ({@code DELETE}),
     * delete or rename anything in it ({@code FILE_DELETE_CHILD}), change its DACL or owner
     * ({@code WRITE_DAC}, {@code WRITE_OWNER}), its SACL ({@code ACCESS_SYSTEM_SECURITY}), and the
     * generic or open-ended bits that may include any of these ({@code GENERIC_ALL},
     * {@code GENERIC_WRITE}, {@code MAXIMUM_ALLOWED}).
     *
     * <p>SECURITY: {@code FILE_ADD_FILE} and {@code FILE_ADD_SUBDIRECTORY} alone are not in the
     * set: adding an entry cannot replace or rename an existing one (that needs {@code DELETE} on
     * the entry or {@code FILE_DELETE_CHILD} on the directory, both refused), and a component
     * planted by someone else is refused by its owner. This is the Windows counterpart of the
     * sticky-directory rule of wire-format d.6, and it is what lets a stock volume root (which
     * grants Authenticated Users {@code FILE_ADD_SUBDIRECTORY}) be an ancestor.
     */
    static final int SUBSTITUTION = DELETE | FILE_DELETE_CHILD | WRITE_DAC | WRITE_OWNER | ACCESS_SYSTEM_SECURITY
            | GENERIC_ALL | GENERIC_WRITE | MAXIMUM_ALLOWED;

    private static final String[][] NAMES = {
            {"0x00000001", "FILE_READ_DATA"}, {"0x00000002", "FILE_WRITE_DATA"}, {"0x00000004", "FILE_APPEND_DATA"},
            {"0x00000008", "FILE_READ_EA"}, {"0x00000010", "FILE_WRITE_EA"}, {"0x00000020", "FILE_EXECUTE"},
            {"0x00000040", "FILE_DELETE_CHILD"}, {"0x00000080", "FILE_READ_ATTRIBUTES"},
            {"0x00000100", "FILE_WRITE_ATTRIBUTES"}, {"0x00010000", "DELETE"}, {"0x00020000", "READ_CONTROL"},
            {"0x00040000", "WRITE_DAC"}, {"0x00080000", "WRITE_OWNER"}, {"0x00100000", "SYNCHRONIZE"},
            {"0x01000000", "ACCESS_SYSTEM_SECURITY"}, {"0x02000000", "MAXIMUM_ALLOWED"},
            {"0x10000000", "GENERIC_ALL"}, {"0x20000000", "GENERIC_EXECUTE"}, {"0x40000000", "GENERIC_WRITE"},
            {"0x80000000", "GENERIC_READ"},
    };

    private AccessRights() {}

    /** The names of the bits in {@code mask}, in bit order, for example {@code DELETE|WRITE_DAC}. */
    static String names(int mask) {
        List<String> out = new ArrayList<>();
        int rest = mask;
        for (String[] n : NAMES) {
            int bit = Integer.parseUnsignedInt(n[0].substring(2), 16);
            if ((mask & bit) != 0) {
                out.add(n[1]);
                rest &= ~bit;
            }
        }
        if (rest != 0) {
            out.add(String.format("0x%08x", rest));
        }
        return out.isEmpty() ? "none" : String.join("|", out);
    }
}
