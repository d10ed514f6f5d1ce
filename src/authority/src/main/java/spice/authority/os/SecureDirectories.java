package spice.authority.os;

import java.util.List;
import java.util.ServiceLoader;

/**
 * Selects the platform's {@link SecureDirectoryProvider} once per JVM.
 *
 * <p><b>Guarantees.</b> The first call loads every provider on the class path and keeps
 * the single one that supports this platform; the choice is logged once and never changes.
 * With no supporting provider (or more than one) every call throws
 * {@link UnsupportedPlatformException}: there is no silent fallback.
 */
public final class SecureDirectories {

    private SecureDirectories() {}

    /**
     * The provider for this platform.
     *
     * @throws UnsupportedPlatformException if the platform is not supported
     */
    public static SecureDirectoryProvider provider() {
        return Holder.SELECTED.get();
    }

    /** Package-private for tests: selection over an explicit list of candidates. */
    static Selection select(List<SecureDirectoryProvider> candidates, String osName, String osArch) {
        List<SecureDirectoryProvider> supported =
                candidates.stream().filter(SecureDirectoryProvider::isSupported).toList();
        if (supported.size() == 1) {
            return new Selection(supported.getFirst(), null);
        }
        String found = candidates.isEmpty()
                ? "no provider on the class path"
                : "providers found: " + candidates.stream().map(SecureDirectoryProvider::platform).toList();
        String why = supported.isEmpty() ? "no provider supports it" : "more than one provider supports it";
        return new Selection(null, "unsupported platform " + osName + "/" + osArch + ": " + why + " (" + found
                + "); supported: Linux and macOS on x86_64 and aarch64; Windows on x86_64 and arm64 (never run there)");
    }

    record Selection(SecureDirectoryProvider provider, String refusal) {
        SecureDirectoryProvider get() {
            if (provider == null) {
                throw new UnsupportedPlatformException(refusal);
            }
            return provider;
        }
    }

    private static final class Holder {
        static final Selection SELECTED = load();

        private static Selection load() {
            List<SecureDirectoryProvider> all = ServiceLoader.load(SecureDirectoryProvider.class,
                            SecureDirectories.class.getClassLoader())
                    .stream().map(ServiceLoader.Provider::get).toList();
            Selection s = select(all, System.getProperty("os.name"), System.getProperty("os.arch"));
            System.Logger log = System.getLogger(SecureDirectories.class.getName());
            if (s.provider() != null) {
                log.log(System.Logger.Level.INFO, "secure directory platform: {0}", s.provider().platform());
            } else {
                log.log(System.Logger.Level.ERROR, s.refusal());
            }
            return s;
        }
    }
}
