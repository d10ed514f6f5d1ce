package spice.authority.app.api;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import spice.authority.core.AuthorityException;
import spice.authority.core.RunAuthority;
import spice.authority.core.RunRecord;

/** The verified records of the authority directory, for status and listing. */
public record RunListing(List<RunRecord> records, int unreadable) {

    /**
     * Lists {@code run-*.state} names, then reads and verifies each through the authority.
     *
     * <p>RACE: the listing walks the configured path by name, not the retained descriptor; a
     * substituted directory can only make entries missing or unverifiable, because every record is
     * read relative to the retained descriptor and its MAC and file name are checked.
     */
    public static RunListing of(RunAuthority a) throws AuthorityException.Closed {
        List<RunRecord> out = new ArrayList<>();
        int bad = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of(a.directory()), "run-*.state")) {
            for (Path p : ds) {
                try {
                    var r = a.readStateFile(p.getFileName().toString());
                    if (r.isPresent()) {
                        out.add(r.get());
                    }
                } catch (AuthorityException.Closed e) {
                    throw e;
                } catch (AuthorityException e) {
                    bad++;
                }
            }
        } catch (IOException e) {
            bad++;
        }
        out.sort(Comparator.comparing(RunRecord::runId));
        return new RunListing(out, bad);
    }
}
