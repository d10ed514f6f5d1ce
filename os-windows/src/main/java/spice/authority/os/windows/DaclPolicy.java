package spice.authority.os.windows;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Judges owners and DACLs of the authority path against the trusted principals (RFC 0007: the
 * current user, SYSTEM, Administrators and TrustedInstaller; wire-format d.8).
 *
 * <p><b>Guarantees.</b> Every check fails closed:
 * <ul>
 *   <li>A descriptor that does not parse, names no owner, or has no DACL or a NULL DACL is
 *       refused. So is any ACE whose type is not {@code ACCESS_ALLOWED} or {@code ACCESS_DENIED}
 *       (object, callback, compound, label ACEs): what is not understood is not accepted.</li>
 *   <li><b>Ancestors</b> ({@link #checkAncestor}, also the volume root): the owner is trusted, and
 *       no untrusted principal is granted any right of {@link AccessRights#SUBSTITUTION}. A deny
 *       entry is credited only against <em>later</em> allow entries for the <em>same</em> SID, only
 *       for its specific and standard bits, and only when it applies to the object (not
 *       inherit-only) and carries no flag this code does not know: that is the Windows access
 *       check in DACL order, restricted to what can be known without the token. A deny for a
 *       group is never credited against an allow for another SID, and a deny that comes after an
 *       allow (an inherited deny after an explicit allow, in canonical order) never masks it.</li>
 *   <li><b>The leaf and every authority file</b> ({@link #checkLeaf}): owned by the current user,
 *       the DACL protected, and every entry an explicit (not inherited) {@code ACCESS_ALLOWED} for a
 *       trusted principal. A deny entry is refused there rather than interpreted.</li>
 * </ul>
 * Each refusal is a {@link RuleViolation} naming its {@link DaclRule} and the offending entry.
 */
final class DaclPolicy {

    private final Sid user;
    private final Set<Sid> trusted;

    /** @param user the current user's SID (from the process token) */
    DaclPolicy(Sid user) {
        this.user = Objects.requireNonNull(user, "user");
        this.trusted = Set.of(user, Sid.SYSTEM, Sid.ADMINISTRATORS, Sid.TRUSTED_INSTALLER);
    }

    Sid user() {
        return user;
    }

    boolean trusted(Sid sid) {
        return sid != null && trusted.contains(sid);
    }

    /** Parses {@code raw}; a malformed descriptor is {@link DaclRule#SD_MALFORMED}, with no detail. */
    static SecurityDescriptor parse(byte[] raw) throws RuleViolation {
        try {
            return SecurityDescriptor.parse(raw);
        } catch (MalformedDescriptorException e) {
            // SECURITY: one generic refusal; the structural reason stays out of messages.
            throw new RuleViolation(DaclRule.SD_MALFORMED, "the security descriptor cannot be parsed");
        }
    }

    /** Checks an ancestor (or the volume root) of the authority directory. */
    void checkAncestor(SecurityDescriptor sd) throws RuleViolation {
        if (sd.owner() == null) {
            throw new RuleViolation(DaclRule.OWNER_ABSENT, "the security descriptor names no owner");
        }
        if (!trusted(sd.owner())) {
            throw new RuleViolation(DaclRule.OWNER_UNTRUSTED, "owned by " + sd.owner()
                    + ", which is not a trusted principal (the user, SYSTEM, Administrators, TrustedInstaller)");
        }
        requireDacl(sd);
        Map<Sid, Integer> deniedBefore = new HashMap<>();
        int index = 0;
        for (SecurityDescriptor.Ace ace : sd.dacl().aces()) {
            requireKnownType(ace, index);
            if (ace.inheritOnly()) {
                index++;
                continue; // applies to objects created below, which are judged themselves
            }
            if (ace.denied()) {
                if ((ace.flags() & ~SecurityDescriptor.Ace.KNOWN_FLAGS) == 0) {
                    deniedBefore.merge(ace.sid(), ace.mask() & AccessRights.SPECIFIC_AND_STANDARD, (a, b) -> a | b);
                }
            } else if (!trusted(ace.sid())) {
                // SECURITY: only a deny for the same SID that came earlier takes bits away.
                int effective = ace.mask() & ~deniedBefore.getOrDefault(ace.sid(), 0);
                int bad = effective & AccessRights.SUBSTITUTION;
                if (bad != 0) {
                    throw new RuleViolation(DaclRule.ANCESTOR_WRITER, "ACE " + index + " grants "
                            + AccessRights.names(bad) + " to " + ace.sid() + ", which is not a trusted principal"
                            + (ace.inherited() ? " (inherited)" : ""));
                }
            }
            index++;
        }
    }

    /** Checks the authority directory itself, or a file in it. */
    void checkLeaf(SecurityDescriptor sd) throws RuleViolation {
        if (sd.owner() == null) {
            throw new RuleViolation(DaclRule.OWNER_ABSENT, "the security descriptor names no owner");
        }
        if (!sd.owner().equals(user)) {
            throw new RuleViolation(DaclRule.OWNER_NOT_USER, "owned by " + sd.owner() + ", not the current user " + user);
        }
        requireDacl(sd);
        if (!sd.daclProtected()) {
            throw new RuleViolation(DaclRule.LEAF_UNPROTECTED,
                    "the DACL is not protected (SE_DACL_PROTECTED): it takes entries from its parent");
        }
        int index = 0;
        for (SecurityDescriptor.Ace ace : sd.dacl().aces()) {
            requireKnownType(ace, index);
            if (ace.denied()) {
                throw new RuleViolation(DaclRule.LEAF_DENY, "ACE " + index + " is an ACCESS_DENIED entry for "
                        + ace.sid() + "; the helper's own objects hold allow entries only");
            }
            if (ace.inherited()) {
                throw new RuleViolation(DaclRule.LEAF_INHERITED, "ACE " + index + " for " + ace.sid()
                        + " is inherited (INHERITED_ACE)");
            }
            if (!trusted(ace.sid())) {
                throw new RuleViolation(DaclRule.LEAF_UNTRUSTED, "ACE " + index + " grants "
                        + AccessRights.names(ace.mask()) + " to " + ace.sid() + ", which is not a trusted principal");
            }
            index++;
        }
    }

    private static void requireDacl(SecurityDescriptor sd) throws RuleViolation {
        if (sd.nullDacl()) {
            throw new RuleViolation(DaclRule.DACL_NULL, sd.daclPresent()
                    ? "a NULL DACL grants everyone full access" : "no DACL: everyone has full access");
        }
    }

    private static void requireKnownType(SecurityDescriptor.Ace ace, int index) throws RuleViolation {
        if (!ace.allowed() && !ace.denied()) {
            throw new RuleViolation(DaclRule.ACE_UNKNOWN, String.format(
                    "ACE %d has type 0x%02x, which this helper does not evaluate", index, ace.type()));
        }
    }
}
