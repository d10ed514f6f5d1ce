package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static spice.authority.os.windows.SdBuilder.ADMINS;
import static spice.authority.os.windows.SdBuilder.AUTHENTICATED_USERS;
import static spice.authority.os.windows.SdBuilder.CI;
import static spice.authority.os.windows.SdBuilder.CREATOR_OWNER;
import static spice.authority.os.windows.SdBuilder.EVERYONE;
import static spice.authority.os.windows.SdBuilder.FULL;
import static spice.authority.os.windows.SdBuilder.ID;
import static spice.authority.os.windows.SdBuilder.IO;
import static spice.authority.os.windows.SdBuilder.MODIFY;
import static spice.authority.os.windows.SdBuilder.OI;
import static spice.authority.os.windows.SdBuilder.OTHER_USER;
import static spice.authority.os.windows.SdBuilder.READ_EXECUTE;
import static spice.authority.os.windows.SdBuilder.SYSTEM;
import static spice.authority.os.windows.SdBuilder.TRUSTED_INSTALLER;
import static spice.authority.os.windows.SdBuilder.USER;
import static spice.authority.os.windows.SdBuilder.USERS;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;

/**
 * The owner and DACL rules over descriptors built in memory in the binary self-relative format.
 * Each refusal names its rule; each test that refuses has an accepted twin that differs only in
 * the one entry under test, so a refusal cannot come from something else.
 */
class DaclPolicyTest {

    private static final DaclPolicy POLICY = new DaclPolicy(Sid.parse(USER));

    private static final int DELETE = 0x00010000;
    private static final int WRITE_DAC = 0x00040000;
    private static final int WRITE_OWNER = 0x00080000;
    private static final int DELETE_CHILD = 0x00000040;
    private static final int GENERIC_ALL = 0x10000000;
    private static final int GENERIC_WRITE = 0x40000000;
    private static final int GENERIC_READ = 0x80000000;
    private static final int GENERIC_EXECUTE = 0x20000000;
    private static final int MAXIMUM_ALLOWED = 0x02000000;
    private static final int ACCESS_SYSTEM_SECURITY = 0x01000000;
    private static final int ADD_FILE = 0x2;
    private static final int ADD_SUBDIRECTORY = 0x4;
    /** What GENERIC_WRITE maps to for files: FILE_GENERIC_WRITE. */
    private static final int FILE_GENERIC_WRITE = 0x00120116;

    static RuleViolation ancestorRefusal(SdBuilder b) {
        RuleViolation v = catchThrowableOfType(RuleViolation.class,
                () -> POLICY.checkAncestor(DaclPolicy.parse(b.build())));
        assertThat(v).as("the ancestor must be refused").isNotNull();
        return v;
    }

    static RuleViolation leafRefusal(SdBuilder b) {
        RuleViolation v = catchThrowableOfType(RuleViolation.class,
                () -> POLICY.checkLeaf(DaclPolicy.parse(b.build())));
        assertThat(v).as("the leaf must be refused").isNotNull();
        return v;
    }

    static void assertRule(RuleViolation v, DaclRule rule) {
        assertThat(v.rule()).as(v.getMessage()).isEqualTo(rule);
        assertThat(v.getMessage()).startsWith(rule.id() + ": ");
    }

    static void ancestorAccepted(SdBuilder b) {
        assertThatCode(() -> POLICY.checkAncestor(DaclPolicy.parse(b.build()))).doesNotThrowAnyException();
    }

    static void leafAccepted(SdBuilder b) {
        assertThatCode(() -> POLICY.checkLeaf(DaclPolicy.parse(b.build()))).doesNotThrowAnyException();
    }

    @Nested
    class Ancestors {

        @Test
        void stockDirectory_accepted() {
            ancestorAccepted(SdBuilder.ancestor());
        }

        /** A stock NTFS volume root (Windows 10/11), as icacls shows it. */
        @Test
        void stockVolumeRoot_accepted() {
            ancestorAccepted(new SdBuilder().owner(TRUSTED_INSTALLER)
                    .allow(OI | CI, FULL, ADMINS)
                    .allow(OI | CI, FULL, SYSTEM)
                    .allow(OI | CI, READ_EXECUTE, USERS)
                    .allow(OI | CI | IO, DELETE | GENERIC_EXECUTE | GENERIC_WRITE | GENERIC_READ, AUTHENTICATED_USERS)
                    .allow(0, ADD_SUBDIRECTORY, AUTHENTICATED_USERS));
        }

        /** A stock profile directory C:\Users\name: inherited entries only, owner SYSTEM. */
        @Test
        void stockProfileDirectory_accepted() {
            ancestorAccepted(new SdBuilder().owner(SYSTEM)
                    .allow(OI | CI | ID, FULL, SYSTEM)
                    .allow(OI | CI | ID, FULL, ADMINS)
                    .allow(OI | CI | ID, FULL, USER));
        }

        @ParameterizedTest
        @ValueSource(strings = {USER, SYSTEM, ADMINS, TRUSTED_INSTALLER})
        void trustedOwnerWithFullControl_accepted(String sid) {
            ancestorAccepted(new SdBuilder().owner(sid).allow(0, FULL | GENERIC_ALL, sid));
        }

        @ParameterizedTest
        @ValueSource(strings = {OTHER_USER, USERS, EVERYONE, AUTHENTICATED_USERS})
        void untrustedOwner_refused(String owner) {
            RuleViolation v = ancestorRefusal(SdBuilder.ancestor().owner(owner));
            assertRule(v, DaclRule.OWNER_UNTRUSTED);
            assertThat(v.detail()).contains(owner);
        }

        @Test
        void noOwner_refused() {
            assertRule(ancestorRefusal(SdBuilder.ancestor().owner(null)), DaclRule.OWNER_ABSENT);
        }

        @Test
        void nullDacl_refused() {
            RuleViolation v = ancestorRefusal(SdBuilder.ancestor().nullDacl());
            assertRule(v, DaclRule.DACL_NULL);
            assertThat(v.detail()).contains("NULL DACL");
        }

        @Test
        void absentDacl_refused() {
            assertRule(ancestorRefusal(SdBuilder.ancestor().control(0x8000)), DaclRule.DACL_NULL);
        }

        /** Every right that lets someone substitute, move or re-permission the component. */
        @ParameterizedTest
        @ValueSource(ints = {DELETE, DELETE_CHILD, WRITE_DAC, WRITE_OWNER, GENERIC_ALL, GENERIC_WRITE,
                MAXIMUM_ALLOWED, ACCESS_SYSTEM_SECURITY, MODIFY, FULL})
        void untrustedWriter_refused(int mask) {
            ancestorAccepted(SdBuilder.ancestor().allow(0, mask, SYSTEM)); // the twin: same right, trusted
            RuleViolation v = ancestorRefusal(SdBuilder.ancestor().allow(0, mask, OTHER_USER));
            assertRule(v, DaclRule.ANCESTOR_WRITER);
            assertThat(v.detail()).contains(OTHER_USER).contains("ACE 3 grants ");
        }

        @Test
        void writeDac_namedInRefusal() {
            RuleViolation v = ancestorRefusal(SdBuilder.ancestor().allow(0, WRITE_DAC | 0x1, EVERYONE));
            assertRule(v, DaclRule.ANCESTOR_WRITER);
            assertThat(v.detail()).isEqualTo("ACE 3 grants WRITE_DAC to S-1-1-0, which is not a trusted principal");
        }

        @Test
        void inheritedUntrustedWriter_refused() {
            RuleViolation v = ancestorRefusal(SdBuilder.ancestor().allow(OI | CI | ID, MODIFY, USERS));
            assertRule(v, DaclRule.ANCESTOR_WRITER);
            assertThat(v.detail()).endsWith("(inherited)").contains("DELETE");
        }

        /**
         * Adding entries is the sticky-directory case: it cannot replace an existing entry. Read,
         * traverse and the mapped FILE_GENERIC_WRITE carry no substitution right.
         */
        @ParameterizedTest
        @ValueSource(ints = {ADD_FILE, ADD_SUBDIRECTORY, READ_EXECUTE, FILE_GENERIC_WRITE})
        void untrustedWithoutSubstitutionRights_accepted(int mask) {
            ancestorAccepted(SdBuilder.ancestor().allow(0, mask, EVERYONE));
        }

        @Test
        void untrustedInheritOnlyGrant_accepted() {
            ancestorAccepted(SdBuilder.ancestor().allow(OI | CI | IO, FULL | GENERIC_ALL, CREATOR_OWNER));
        }

        @ParameterizedTest
        @ValueSource(ints = {0x02, 0x03, 0x04, 0x05, 0x06, 0x09, 0x0a, 0x0b, 0x0c, 0x11, 0x12, 0x13, 0x14, 0x15, 0xff})
        void unknownAceType_refused(int type) {
            RuleViolation v = ancestorRefusal(SdBuilder.ancestor().ace(type, 0, 0x1, SYSTEM));
            assertRule(v, DaclRule.ACE_UNKNOWN);
            assertThat(v.detail()).contains(String.format("type 0x%02x", type));
        }

        @Test
        void unknownAceTypeInheritOnly_refused() {
            assertRule(ancestorRefusal(SdBuilder.ancestor().ace(0x05, OI | CI | IO, 0x1, SYSTEM)), DaclRule.ACE_UNKNOWN);
        }

        /** A deny for the same SID before the allow takes the bits away: the Windows access check. */
        @Test
        void denyBeforeAllowSameSid_masksTheGrant() {
            ancestorAccepted(SdBuilder.ancestor()
                    .deny(0, DELETE | DELETE_CHILD | WRITE_DAC | WRITE_OWNER, USERS)
                    .allow(0, MODIFY, USERS));
        }

        /**
         * Canonical order puts inherited entries after explicit ones, so an inherited deny comes
         * after the explicit allow it seems to cancel and does not apply to the bits already granted.
         */
        @Test
        void inheritedDenyAfterExplicitAllow_refused() {
            RuleViolation v = ancestorRefusal(SdBuilder.ancestor()
                    .allow(0, MODIFY, USERS)
                    .deny(ID, DELETE | DELETE_CHILD | WRITE_DAC | WRITE_OWNER, USERS));
            assertRule(v, DaclRule.ANCESTOR_WRITER);
            assertThat(v.detail()).contains("DELETE");
        }

        /** The token is unknown: a deny for Everyone is not credited against an allow for Users. */
        @Test
        void denyForAnotherSid_notCredited() {
            assertRule(ancestorRefusal(SdBuilder.ancestor()
                    .deny(0, DELETE | DELETE_CHILD | WRITE_DAC | WRITE_OWNER, EVERYONE)
                    .allow(0, MODIFY, USERS)), DaclRule.ANCESTOR_WRITER);
        }

        @Test
        void inheritOnlyDeny_notCredited() {
            assertRule(ancestorRefusal(SdBuilder.ancestor()
                    .deny(OI | CI | IO, DELETE | DELETE_CHILD | WRITE_DAC | WRITE_OWNER, USERS)
                    .allow(0, MODIFY, USERS)), DaclRule.ANCESTOR_WRITER);
        }

        @Test
        void denyWithUnknownFlag_notCredited() {
            assertRule(ancestorRefusal(SdBuilder.ancestor()
                    .deny(0x20, DELETE | DELETE_CHILD | WRITE_DAC | WRITE_OWNER, USERS)
                    .allow(0, MODIFY, USERS)), DaclRule.ANCESTOR_WRITER);
        }

        /** Generic bits in a deny are not mapped here, so they take nothing away. */
        @Test
        void genericDeny_notCredited() {
            assertRule(ancestorRefusal(SdBuilder.ancestor()
                    .deny(0, GENERIC_ALL | GENERIC_WRITE, USERS)
                    .allow(0, GENERIC_ALL | GENERIC_WRITE, USERS)), DaclRule.ANCESTOR_WRITER);
        }

        /** A partial deny leaves the other dangerous bits granted. */
        @Test
        void partialDeny_refusesWhatRemains() {
            RuleViolation v = ancestorRefusal(SdBuilder.ancestor()
                    .deny(0, DELETE, USERS)
                    .allow(0, DELETE | WRITE_DAC, USERS));
            assertRule(v, DaclRule.ANCESTOR_WRITER);
            assertThat(v.detail()).contains("grants WRITE_DAC to").doesNotContain("DELETE");
        }

        /** A deny entry itself is harmless on an ancestor (it only takes access away). */
        @Test
        void denyAlone_accepted() {
            ancestorAccepted(SdBuilder.ancestor().deny(ID, FULL, EVERYONE));
        }
    }

    @Nested
    class Leaf {

        @Test
        void helpersOwnDescriptor_accepted() {
            leafAccepted(SdBuilder.leaf());
        }

        @Test
        void descriptorTheHelperWrites_accepted() throws Exception {
            byte[] written = SecurityDescriptor.userOnly(Sid.parse(USER));
            assertThat(written).isEqualTo(SdBuilder.leaf().build());
            POLICY.checkLeaf(DaclPolicy.parse(written));
        }

        @Test
        void trustedPrincipalsOnly_accepted() {
            leafAccepted(SdBuilder.leaf().allow(OI | CI, FULL, SYSTEM).allow(OI | CI, FULL, ADMINS)
                    .allow(0, READ_EXECUTE, TRUSTED_INSTALLER));
        }

        @ParameterizedTest
        @ValueSource(strings = {OTHER_USER, SYSTEM, ADMINS})
        void ownerNotTheUser_refused(String owner) {
            RuleViolation v = leafRefusal(SdBuilder.leaf().owner(owner));
            assertRule(v, DaclRule.OWNER_NOT_USER);
            assertThat(v.detail()).isEqualTo("owned by " + owner + ", not the current user " + USER);
        }

        @Test
        void noOwner_refused() {
            assertRule(leafRefusal(SdBuilder.leaf().owner(null)), DaclRule.OWNER_ABSENT);
        }

        @Test
        void unprotectedDacl_refused() {
            assertRule(leafRefusal(new SdBuilder().owner(USER).allow(0, FULL, USER)), DaclRule.LEAF_UNPROTECTED);
        }

        @Test
        void nullDacl_refused() {
            assertRule(leafRefusal(SdBuilder.leaf().nullDacl()), DaclRule.DACL_NULL);
        }

        @Test
        void absentDacl_refused() {
            assertRule(leafRefusal(SdBuilder.leaf().control(0x8000 | 0x1000)), DaclRule.DACL_NULL);
        }

        /** On the leaf even read is refused: the key file must be readable by trusted principals only. */
        @ParameterizedTest
        @ValueSource(ints = {0x1, ADD_FILE, FILE_GENERIC_WRITE, GENERIC_READ, DELETE, WRITE_DAC, WRITE_OWNER,
                GENERIC_ALL, 0})
        void untrustedGrant_refused(int mask) {
            RuleViolation v = leafRefusal(SdBuilder.leaf().allow(0, mask, OTHER_USER));
            assertRule(v, DaclRule.LEAF_UNTRUSTED);
            assertThat(v.detail()).contains(OTHER_USER);
        }

        @Test
        void denyEntry_refused() {
            assertRule(leafRefusal(SdBuilder.leaf().deny(0, DELETE, EVERYONE)), DaclRule.LEAF_DENY);
        }

        @Test
        void inheritedDeny_refused() {
            RuleViolation v = leafRefusal(SdBuilder.leaf().deny(ID, WRITE_DAC, SYSTEM));
            assertRule(v, DaclRule.LEAF_DENY);
        }

        @Test
        void inheritedAllow_refused() {
            RuleViolation v = leafRefusal(SdBuilder.leaf().allow(OI | CI | ID, FULL, SYSTEM));
            assertRule(v, DaclRule.LEAF_INHERITED);
            assertThat(v.detail()).isEqualTo("ACE 1 for S-1-5-18 is inherited (INHERITED_ACE)");
        }

        @ParameterizedTest
        @ValueSource(ints = {0x05, 0x09, 0x11})
        void unknownAce_refused(int type) {
            assertRule(leafRefusal(SdBuilder.leaf().ace(type, 0, 0x1, USER)), DaclRule.ACE_UNKNOWN);
        }
    }

    @Test
    void malformedDescriptor_refusedGenerically() {
        byte[] sd = SdBuilder.leaf().build();
        byte[] cut = java.util.Arrays.copyOf(sd, sd.length - 1);
        RuleViolation v = catchThrowableOfType(RuleViolation.class, () -> DaclPolicy.parse(cut));
        assertRule(v, DaclRule.SD_MALFORMED);
        assertThat(v.detail()).isEqualTo("the security descriptor cannot be parsed");
        assertThat(v.getCause()).isNull();
    }

    @Test
    void refusal_namesComponentRuleAndCategory() {
        RuleViolation v = ancestorRefusal(SdBuilder.ancestor().nullDacl());
        DirectoryRefusedException e = v.refusal("C:\\Users\\me");
        assertThat(e.category()).isEqualTo(Category.PERMS);
        assertThat(e.component()).isEqualTo("C:\\Users\\me");
        assertThat(e.getMessage()).isEqualTo("C:\\Users\\me: PERMS (W-DACL-NULL: a NULL DACL grants everyone full access)");
    }

    @Test
    void everyRule_hasDistinctId() {
        assertThat(java.util.Arrays.stream(DaclRule.values()).map(DaclRule::id).distinct().count())
                .isEqualTo(DaclRule.values().length);
    }
}
