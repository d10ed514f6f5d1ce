package spice.authority.os.windows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static spice.authority.os.windows.SdBuilder.EVERYONE;
import static spice.authority.os.windows.SdBuilder.FULL;
import static spice.authority.os.windows.SdBuilder.OTHER_USER;
import static spice.authority.os.windows.SdBuilder.USER;
import static spice.authority.os.windows.SdBuilder.USERS;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import spice.authority.os.DirectoryRefusedException;
import spice.authority.os.DirectoryRefusedException.Category;
import spice.authority.os.OpenMode;

/**
 * The directory holding the TCP bearer token ({@code %LOCALAPPDATA%\spice-agent\endpoint}, or the
 * parent of {@code --token-file}) is opened as the authority directory is, so it passes the same
 * owner and DACL rules: {@code serve} opens it with {@code CREATE_OR_VALIDATE} before writing the
 * token, the CLI with {@code VALIDATE_ONLY} before reading it. Over {@link FakeWindows}: proves the
 * rules are applied, not the Windows calls (never run).
 */
class TokenDirectoryTest {

    private static final String LOCAL = "C:\\Users\\me\\AppData\\Local";
    private static final String ENDPOINT = LOCAL + "\\spice-agent\\endpoint";
    private static final String AUTHORITY = LOCAL + "\\spice-agent\\authority";

    private FakeWindows fake;
    private FakeWindows.Node spiceAgent;

    @BeforeEach
    void setUp() {
        fake = new FakeWindows(USER);
        spiceAgent = fake.profile().mkdir("AppData", SdBuilder.leaf().build()).mkdir("Local", SdBuilder.leaf().build())
                .mkdir("spice-agent", SdBuilder.leaf().build());
    }

    private WindowsSecureDirectory open(String path, OpenMode mode) throws DirectoryRefusedException {
        return WindowsSecureDirectory.open(path, mode, fake, fake.user);
    }

    private DirectoryRefusedException refused(String path, OpenMode mode) {
        String before = fake.snapshot();
        DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class, () -> open(path, mode).close());
        assertThat(e).as(path + " must be refused").isNotNull();
        assertThat(fake.snapshot()).as("nothing changed").isEqualTo(before);
        assertThat(fake.openHandles()).as("no handle leaked").isZero();
        return e;
    }

    @Test
    void serveThenCli_createsUserOnlyDirectoryAndToken_andReadsItBack() throws Exception {
        byte[] token = "00ff".repeat(16).getBytes(StandardCharsets.US_ASCII);
        try (WindowsSecureDirectory d = open(ENDPOINT, OpenMode.CREATE_OR_VALIDATE)) {
            d.writeAtomically("token", token);
        }
        FakeWindows.Node dir = spiceAgent.child("endpoint");
        assertThat(dir.sd).isEqualTo(SecurityDescriptor.userOnly(fake.user));
        assertThat(dir.child("token").sd).isEqualTo(SecurityDescriptor.userOnly(fake.user));
        try (WindowsSecureDirectory d = open(ENDPOINT, OpenMode.VALIDATE_ONLY)) {
            assertThat(d.read("token", 64)).isEqualTo(token);
        }
        assertThat(fake.openHandles()).isZero();
    }

    /** Each bad descriptor of the leaf, and the rule both directories must break with it. */
    private static Map<String, byte[]> badLeaves() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("W-LEAF-UNTRUSTED", SdBuilder.leaf().allow(0, 0x00120089, USERS).build()); // Users may read the token
        m.put("W-LEAF-UNPROTECTED", new SdBuilder().owner(USER).allow(SdBuilder.ID, FULL, USER).build());
        m.put("W-OWNER-NOT-USER", SdBuilder.leaf().owner(OTHER_USER).build());
        m.put("W-DACL-NULL", SdBuilder.leaf().nullDacl().build());
        m.put("W-LEAF-DENY", SdBuilder.leaf().deny(0, 0x1, EVERYONE).build());
        return m;
    }

    @Test
    void badEndpointLeaf_refusedByTheSameRuleAsTheAuthorityLeaf() {
        for (Map.Entry<String, byte[]> bad : badLeaves().entrySet()) {
            setUp();
            spiceAgent.mkdir("endpoint", bad.getValue());
            spiceAgent.mkdir("authority", bad.getValue());
            for (OpenMode mode : OpenMode.values()) {
                DirectoryRefusedException ep = refused(ENDPOINT, mode);
                DirectoryRefusedException auth = refused(AUTHORITY, mode);
                assertThat(ep.detail()).as(bad.getKey() + " " + mode).startsWith(bad.getKey());
                assertThat(ep.component()).isEqualTo(ENDPOINT);
                assertThat(ep.category()).isEqualTo(auth.category());
                assertThat(auth.detail()).startsWith(bad.getKey());
            }
        }
    }

    @Test
    void ancestorWritableByOthers_refusesTheTokenDirectory() {
        spiceAgent.sd = SdBuilder.leaf().allow(0, 0x00010000, USERS).build(); // Users may DELETE spice-agent
        DirectoryRefusedException e = refused(ENDPOINT, OpenMode.CREATE_OR_VALIDATE);
        assertThat(e.category()).isEqualTo(Category.PERMS);
        assertThat(e.component()).isEqualTo(LOCAL + "\\spice-agent");
        assertThat(e.detail()).startsWith("W-ANCESTOR-WRITER");
        assertThat(spiceAgent.child("endpoint")).as("nothing created below a refused ancestor").isNull();
    }

    @Test
    void tokenFileReadableByOthers_refusedToTheReader() throws Exception {
        spiceAgent.mkdir("endpoint", SdBuilder.leaf().build())
                .file("token", SdBuilder.leaf().allow(0, 0x00120089, EVERYONE).build(), new byte[] {'a'});
        try (WindowsSecureDirectory d = open(ENDPOINT, OpenMode.VALIDATE_ONLY)) {
            DirectoryRefusedException e = catchThrowableOfType(DirectoryRefusedException.class, () -> d.read("token", 64));
            assertThat(e.category()).isEqualTo(Category.MODE);
            assertThat(e.detail()).startsWith("W-LEAF-UNTRUSTED");
        }
    }
}
