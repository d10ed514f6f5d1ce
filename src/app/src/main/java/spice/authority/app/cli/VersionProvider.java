package spice.authority.app.cli;

import picocli.CommandLine.IVersionProvider;

/** Version line: implementation version from the jar manifest, and the snapshot formats spoken. */
public final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = VersionProvider.class.getPackage().getImplementationVersion();
        return new String[] {
            "spice-authority " + (v == null ? "0.1.0-SNAPSHOT" : v),
            "snapshot formats spice.agent.snapshot/v1alpha2, spice.agent.snapshot/v1alpha3 (each signed and verified in its own)",
            "Java " + Runtime.version()
        };
    }
}
