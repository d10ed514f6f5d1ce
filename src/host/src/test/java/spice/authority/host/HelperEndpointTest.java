package spice.authority.host;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The one rule for the default endpoint directory, shared by the helper and every client. */
class HelperEndpointTest {

    @Test
    void defaultDirectory_xdgRuntimeDirFirst_elseATmpDirectoryOfTheUser() {
        assertThat(HelperEndpoint.defaultDirectory("/run/user/1000", 1000, false)).isEqualTo("/run/user/1000/spice-agent");
        assertThat(HelperEndpoint.defaultDirectory(null, 1000, false)).isEqualTo("/tmp/spice-agent-1000");
        assertThat(HelperEndpoint.defaultDirectory("relative", 1000, false)).isEqualTo("/tmp/spice-agent-1000");
        assertThat(HelperEndpoint.defaultDirectory("/run/user/1000/", 1000, false)).isEqualTo("/tmp/spice-agent-1000");
        assertThat(HelperEndpoint.defaultDirectory(null, -1, false)).isNull();
    }

    /**
     * On macOS /tmp is a symbolic link to /private/tmp, and the helper refuses any link on the way
     * to its endpoint directory: the default names /private/tmp itself, or the helper could never
     * start from its default (launchd would restart it in a loop).
     */
    @Test
    void defaultDirectory_onMacOs_isUnderPrivateTmp_noSymbolicLinkOnTheWay() {
        assertThat(HelperEndpoint.defaultDirectory(null, 501, true)).isEqualTo("/private/tmp/spice-agent-501");
        assertThat(HelperEndpoint.defaultDirectory("/Users/me/run", 501, true)).isEqualTo("/Users/me/run/spice-agent");
        assertThat(("/private/tmp/spice-agent-4294967294/" + HelperEndpoint.SOCKET_NAME).length())
                .as("within macOS's 104-byte sun_path").isLessThan(104);
    }
}
