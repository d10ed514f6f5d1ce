package spice.authority.app.cli;

import io.quarkus.picocli.runtime.PicocliCommandLineFactory;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import picocli.CommandLine;

/** Gives the Quarkus-run CLI the same exit codes and error reporting as the plain entry point. */
@ApplicationScoped
public class CliProducer {
    @Produces
    CommandLine commandLine(PicocliCommandLineFactory factory) {
        return Cli.configure(factory.create());
    }
}
