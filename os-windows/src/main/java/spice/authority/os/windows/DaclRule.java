package spice.authority.os.windows;

import spice.authority.os.DirectoryRefusedException.Category;

/**
 * The Windows refusal rules (wire-format d.8, issue 14), each with a stable id that every refusal
 * message starts with, and the SPI category it is reported under.
 */
enum DaclRule {
    /** The security descriptor cannot be parsed (one generic refusal; the reason is not shown). */
    SD_MALFORMED("W-SD-MALFORMED", Category.PERMS),
    /** The descriptor names no owner. */
    OWNER_ABSENT("W-OWNER-ABSENT", Category.OWNER),
    /** An ancestor is owned by a principal outside the trusted set. */
    OWNER_UNTRUSTED("W-OWNER-UNTRUSTED", Category.OWNER),
    /** The leaf directory or an authority file is not owned by the current user. */
    OWNER_NOT_USER("W-OWNER-NOT-USER", Category.OWNER),
    /** No DACL, or a NULL DACL: everyone has full access. */
    DACL_NULL("W-DACL-NULL", Category.PERMS),
    /** An ACE type other than ACCESS_ALLOWED and ACCESS_DENIED (object, callback, label, ...). */
    ACE_UNKNOWN("W-ACE-UNKNOWN", Category.PERMS),
    /** An untrusted principal may delete, rename, re-permission or take an ancestor. */
    ANCESTOR_WRITER("W-ANCESTOR-WRITER", Category.PERMS),
    /** The leaf's or a file's DACL is not protected from inheritance. */
    LEAF_UNPROTECTED("W-LEAF-UNPROTECTED", Category.MODE),
    /** The leaf's or a file's DACL holds an ACCESS_DENIED entry (the helper writes allow entries only). */
    LEAF_DENY("W-LEAF-DENY", Category.MODE),
    /** The leaf's or a file's DACL holds an inherited entry. */
    LEAF_INHERITED("W-LEAF-INHERITED", Category.MODE),
    /** The leaf's or a file's DACL grants something to a principal outside the trusted set. */
    LEAF_UNTRUSTED("W-LEAF-UNTRUSTED", Category.MODE),
    /** A reparse point (symbolic link, junction, mount point, ...) where a directory or file must be. */
    REPARSE("W-REPARSE", Category.SYMLINK),
    /** The file id is zero: the file system cannot prove identity. */
    ID_ZERO("W-ID-ZERO", Category.IDENTITY),
    /** The file id is FILE_INVALID_FILE_ID (all ones). */
    ID_INVALID("W-ID-INVALID", Category.IDENTITY);

    private final String id;
    private final Category category;

    DaclRule(String id, Category category) {
        this.id = id;
        this.category = category;
    }

    /** The stable id, such as {@code W-DACL-NULL}. */
    String id() {
        return id;
    }

    /** The SPI category of a refusal under this rule. */
    Category category() {
        return category;
    }
}
