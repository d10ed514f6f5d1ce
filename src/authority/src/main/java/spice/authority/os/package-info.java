/**
 * The operating-system SPI for the authority directory: an owned, validated directory
 * ({@link spice.authority.os.SecureDirectory}), its stable locks
 * ({@link spice.authority.os.StableLock}) and the provider lookup
 * ({@link spice.authority.os.SecureDirectories}).
 *
 * <p>Portable code knows only these types. Each supported platform family ships one
 * implementation ({@code os-posix} for Linux and macOS) registered as a
 * {@link java.util.ServiceLoader} service of {@link spice.authority.os.SecureDirectoryProvider}.
 * The platform is selected once per JVM; an unsupported platform refuses to start.
 *
 * <p>Every failure to bind, validate or use the directory is a
 * {@link spice.authority.os.DirectoryRefusedException} that names the offending path
 * component and a {@link spice.authority.os.DirectoryRefusedException.Category}.
 */
package spice.authority.os;
